// The typed parts of an object that handlers, admission handlers and daemons see: its spec and its status.

import type { StoredObject } from "../runtime/mod.ts";

/**
 * The `spec` of objects of type `T`: the typed spec of a defined resource or a typed kind (`ctx.spec.image` is a
 * `string`), or `Record<string, unknown>` for untyped objects (a plain `{ group, version, kind, plural }` resource).
 *
 * @example
 * ```ts
 * import type { StoredObject } from "../runtime/mod.ts";
 * import type { SpecOf } from "./object_parts.ts";
 * type Site = StoredObject & { spec: { image: string } };
 * const image = (spec: SpecOf<Site>): string => spec.image;
 * console.log(image({ image: "nginx:1.27" }));
 * ```
 */
export type SpecOf<T extends StoredObject> = unknown extends T["spec"] ? Record<string, unknown>
  : NonNullable<T["spec"]>;

/**
 * The `status` of objects of type `T` (partial for a defined resource: a field is missing until written), or
 * `Record<string, unknown>` for untyped objects.
 *
 * @example
 * ```ts
 * import type { StoredObject } from "../runtime/mod.ts";
 * import type { StatusOf } from "./object_parts.ts";
 * type Greeting = StoredObject & { status?: { message?: string } };
 * const message = (status: StatusOf<Greeting>): string => status.message ?? "";
 * console.log(message({}));
 * ```
 */
export type StatusOf<T extends StoredObject> = unknown extends T["status"] ? Record<string, unknown>
  : NonNullable<T["status"]>;

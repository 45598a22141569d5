// A custom resource written once: its names and its TypeBox schema, from which its TypeScript types and its CRD come.

import type { Static as TypeBoxStatic, TSchema as TypeBoxSchema } from "typebox";
import type { ResourceType } from "../kube/mod.ts";
import type { ObjectMeta } from "../runtime/mod.ts";

/**
 * A TypeBox schema (typebox's `TSchema`): what `spec` and `status` are written with. Left out of the generated
 * documentation (`@ignore`): typebox documents it, and documenting it here would pull typebox's types into these docs.
 *
 * @ignore
 */
export type TSchema = TypeBoxSchema;

/**
 * The TypeScript type a TypeBox schema describes (typebox's `Static`). Left out of the generated documentation, as
 * {@link TSchema} is.
 *
 * @ignore
 */
export type Static<T extends TSchema> = TypeBoxStatic<T>;

/**
 * A printer column of `kubectl get` (the CRD's `additionalPrinterColumns`).
 *
 * @example
 * ```ts
 * import type { PrinterColumn } from "../../resources.ts";
 *
 * const columns: PrinterColumn[] = [
 *   { name: "Image", type: "string", jsonPath: ".spec.image" },
 *   { name: "Ready", type: "boolean", jsonPath: ".status.ready", priority: 1 },
 * ];
 * ```
 */
export interface PrinterColumn {
  /** The column's header, e.g. `Image`. */
  name: string;
  /** How `kubectl get` prints the value. */
  type: "string" | "integer" | "number" | "boolean" | "date";
  /** A JSONPath into the object, e.g. `.spec.image`. */
  jsonPath: string;
  /** What the column shows (for humans reading the CRD). */
  description?: string;
  /** 0 (default) shows in `kubectl get`; higher only with `-o wide`. */
  priority?: number;
  /** An OpenAPI format of the value, e.g. `date-time` or `int32`. */
  format?: string;
}

/**
 * What `defineResource` takes: the names, the scope and the schemas of one custom resource version.
 *
 * @example
 * ```ts
 * import Type from "typebox";
 * import { defineResource, type ResourceDefinition } from "../../resources.ts";
 *
 * const definition = {
 *   group: "examples.operator-hub.dev",
 *   version: "v1",
 *   kind: "Backup",
 *   plural: "backups",
 *   scope: "Cluster",
 *   spec: Type.Object({ schedule: Type.String() }),
 * } satisfies ResourceDefinition;
 * const Backup = defineResource(definition);
 * console.log(Backup.namespaced); // false
 * ```
 */
export interface ResourceDefinition<Spec extends TSchema = TSchema, Status extends TSchema = TSchema> {
  /** API group, e.g. `examples.operator-hub.dev`. */
  group: string;
  /** API version, e.g. `v1`. */
  version: string;
  /** Kind, e.g. `Website`. */
  kind: string;
  /** Plural resource name, e.g. `websites`. */
  plural: string;
  /** Singular name. Default: the kind in lower case. */
  singular?: string;
  /** Default `Namespaced`. */
  scope?: "Namespaced" | "Cluster";
  /** Short names for kubectl, e.g. `["ws"]` for `kubectl get ws`. */
  shortNames?: string[];
  /** Groups it belongs to for kubectl, e.g. `["all"]` for `kubectl get all`. */
  categories?: string[];
  /** What the resource is, for `kubectl explain`. */
  description?: string;
  /** The spec's schema (a TypeBox schema: `Type.Object({...})`). */
  spec: Spec;
  /** The status's schema. The SDK's own status fields (`handlers`) are added to the CRD by itself. */
  status?: Status;
  /** Extra columns of `kubectl get` (the CRD's `additionalPrinterColumns`). */
  printerColumns?: PrinterColumn[];
}

/**
 * The object a resource's clients and handlers see: metadata, plus the typed spec and status (any other field the
 * cache or the API server gives is `unknown`). `spec` is required when its schema requires a field (so does the CRD),
 * optional otherwise.
 *
 * @example
 * ```ts
 * import type { TypedObject } from "../../resources.ts";
 *
 * type Website = TypedObject<{ image: string }, { ready: boolean }>;
 * const site: Website = { metadata: { name: "blog", namespace: "web" }, spec: { image: "nginx:1.27" } };
 * console.log(site.spec.image, site.status?.ready ?? false);
 * ```
 */
export type TypedObject<Spec, Status> =
  & {
    apiVersion?: string;
    kind?: string;
    /** The store's metadata, plus the finalizers an object read from the API carries. */
    metadata: ObjectMeta & { finalizers?: string[] };
    /** Partial: any field may be missing until a handler wrote it. Untyped for a resource without a status schema. */
    status?: unknown extends Status ? Record<string, unknown> : Partial<Status>;
    [field: string]: unknown;
  }
  & (Record<never, never> extends Spec ? { spec?: Spec } : { spec: Spec });

/**
 * The type of the objects of `R`, a resource made by `defineResource` or a typed kind (`kinds.ConfigMap`), for the
 * helpers of an operator: `(w: ObjectOf<typeof Website>) => w.spec.image`.
 *
 * @example
 * ```ts
 * import Type from "typebox";
 * import { defineResource, type ObjectOf } from "./define_resource.ts";
 * const Greeting = defineResource({
 *   group: "examples.operator-hub.dev",
 *   version: "v1",
 *   kind: "Greeting",
 *   plural: "greetings",
 *   spec: Type.Object({ name: Type.Optional(Type.String()) }),
 * });
 * const who = (g: ObjectOf<typeof Greeting>): string => g.spec?.name || g.metadata.name;
 * console.log(who({ metadata: { name: "world" } }));
 * ```
 */
export type ObjectOf<R extends { readonly "~object"?: unknown }> = NonNullable<R["~object"]>;

/**
 * A defined resource: a ResourceType (for `resource`, `uses`, `owns`, `clientFor`) that also carries its definition.
 *
 * @example
 * ```ts
 * import type { Resource } from "../../resources.ts";
 *
 * const describe = (r: Resource): string => `${r.plural}.${r.group} (${r.definition.scope ?? "Namespaced"})`;
 * declare const Website: Resource;
 * console.log(describe(Website)); // websites.examples.operator-hub.dev (Namespaced)
 * ```
 */
export interface Resource<Spec extends TSchema = TSchema, Status extends TSchema = TSchema>
  extends ResourceType<TypedObject<Static<Spec>, Static<Status>>> {
  /** What it was defined from: its names, scope and schemas (its CRD is made from them). */
  readonly definition: Readonly<ResourceDefinition<Spec, Status>>;
}

/**
 * Thrown by `defineResource` for a definition a CRD could not be made from, naming the field.
 *
 * @example
 * ```ts
 * import Type from "typebox";
 * import { defineResource, ResourceDefinitionError } from "../../resources.ts";
 *
 * try {
 *   defineResource({ group: "example", version: "v1", kind: "Site", plural: "sites", spec: Type.Object({}) });
 * } catch (err) {
 *   // cannot define a resource: group "example" is not a DNS subdomain with at least one dot, e.g. example.com
 *   if (err instanceof ResourceDefinitionError) console.log(err.message);
 * }
 * ```
 */
export class ResourceDefinitionError extends Error {
  /** Always "ResourceDefinitionError". */
  override name = "ResourceDefinitionError";
}

const DNS_LABEL = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const KIND = /^[A-Z][A-Za-z0-9]*$/;
const VERSION = /^v[1-9][0-9]*((alpha|beta)[1-9][0-9]*)?$/;

/**
 * Defines a custom resource once: the names, scope and schema from which its TypeScript types (`spec` and `status` in
 * every handler, client, index and admission handler) and its CRD (`operator-hub crd FILE`) both come.
 *
 * Guarantees: the result is frozen; a group, version, kind, plural, singular or short name the apiserver would refuse
 * throws ResourceDefinitionError naming the field and the value; `spec` must be an object schema.
 *
 * @example
 * ```ts
 * import Type from "typebox";
 * import { defineResource } from "./define_resource.ts";
 *
 * export const Website = defineResource({
 *   group: "examples.operator-hub.dev",
 *   version: "v1",
 *   kind: "Website",
 *   plural: "websites",
 *   spec: Type.Object({ image: Type.String({ minLength: 1 }), content: Type.Optional(Type.String()) }),
 *   printerColumns: [{ name: "Image", type: "string", jsonPath: ".spec.image" }],
 * });
 * ```
 */
export function defineResource<Spec extends TSchema, Status extends TSchema = TSchema>(
  definition: ResourceDefinition<Spec, Status>,
): Resource<Spec, Status> {
  const d = definition;
  check(
    "group",
    d.group,
    DNS_SUBDOMAIN,
    "a DNS subdomain with at least one dot, e.g. example.com",
    (v) => v.includes("."),
  );
  check("version", d.version, VERSION, "v1, v1beta1, v2alpha1, ...");
  check("kind", d.kind, KIND, "UpperCamelCase, e.g. Website");
  check("plural", d.plural, DNS_LABEL, "a lower-case DNS label, e.g. websites");
  if (d.singular !== undefined) check("singular", d.singular, DNS_LABEL, "a lower-case DNS label");
  for (const s of d.shortNames ?? []) check("shortNames", s, DNS_LABEL, "lower-case DNS labels");
  if ((d.spec as { type?: unknown }).type !== "object") {
    throw new ResourceDefinitionError(`cannot define ${d.kind}: spec must be an object schema (Type.Object)`);
  }
  if (d.status && (d.status as { type?: unknown }).type !== "object") {
    throw new ResourceDefinitionError(`cannot define ${d.kind}: status must be an object schema (Type.Object)`);
  }
  return Object.freeze({
    group: d.group,
    version: d.version,
    kind: d.kind,
    plural: d.plural,
    namespaced: (d.scope ?? "Namespaced") === "Namespaced",
    definition: Object.freeze({ ...d }),
  });
}

function check(field: string, value: unknown, pattern: RegExp, want: string, extra = (_: string) => true): void {
  if (typeof value !== "string" || !pattern.test(value) || value.length > 253 || !extra(value)) {
    throw new ResourceDefinitionError(`cannot define a resource: ${field} ${JSON.stringify(value)} is not ${want}`);
  }
}

// The typed client a reconciler uses for one resource in one cluster: cache reads, API reads and writes, no URLs.

import { isNotFound, type ResourceType } from "../kube/mod.ts";
import type { Request } from "../queue/mod.ts";
import type { StoredObject } from "./cache/store.ts";

/**
 * What an operator does with a resource; the RBAC pre-flight checks exactly these (plus `list` and
 * `watch` of its own resource, which the runtime does for it). `patchStatus` becomes `patch` of the
 * status subresource, or of the object itself when the CRD has none; `apply` is a `patch`.
 *
 * @example
 * ```ts
 * import { defineOperator, type Verb } from "../../sdk.ts";
 * const verbs: Verb[] = ["get", "patch", "patchStatus"]; // `list` and `watch` of its own resource are implied
 * const op = defineOperator({
 *   name: "labeller",
 *   resource: { group: "examples.operator-hub.dev", version: "v1", kind: "Website", plural: "websites" },
 *   verbs,
 *   async reconcile() {},
 * });
 * console.log(op.verbs); // [ "get", "patch", "patchStatus" ]
 * ```
 */
export type Verb = "get" | "list" | "watch" | "create" | "update" | "patch" | "patchStatus" | "delete" | "apply";

/**
 * Names one object to a client call: a Request without its cluster (the client is the cluster's), `namespace` omitted
 * (or "") for cluster-scoped resources. A Request fits.
 *
 * @example
 * ```ts
 * import { ignoreNotFound, type ObjectRef, type ResourceClient } from "../../sdk.ts";
 * declare const client: ResourceClient;
 * const ref: ObjectRef = { namespace: "web", name: "settings" };
 * const fresh = await client.get(ref).catch(ignoreNotFound); // undefined when it does not exist
 * await client.delete({ name: "old-namespace" }); // cluster-scoped: no namespace
 * ```
 */
export type ObjectRef = Pick<Request, "name"> & Partial<Pick<Request, "namespace">>;

/**
 * Selects objects for `list`.
 *
 * @example
 * ```ts
 * import type { ListOptions, ResourceClient } from "../../sdk.ts";
 * declare const client: ResourceClient;
 * const options: ListOptions = { namespace: "web", labelSelector: "app=web,tier!=canary" };
 * const items = await client.list(options);
 * console.log(items.map((o) => o.metadata.name));
 * ```
 */
export interface ListOptions {
  /** Omit for every namespace (or a cluster-scoped resource). */
  namespace?: string;
  /** Kubernetes label selector, e.g. `app=web`. */
  labelSelector?: string;
  /** Kubernetes field selector, e.g. `status.state=Error`. */
  fieldSelector?: string;
}

/**
 * The shape of a patch: JSON merge patch (default), JSON patch, or strategic merge patch (built-in kinds only).
 *
 * @example
 * ```ts
 * import type { PatchType, ResourceClient } from "../../sdk.ts";
 * declare const client: ResourceClient;
 * const type: PatchType = "json";
 * const ref = { namespace: "web", name: "site" };
 * await client.patch(ref, [{ op: "replace", path: "/spec/replicas", value: 3 }], { type });
 * await client.patch(ref, { metadata: { labels: { tier: "edge" } } }); // a merge patch
 * ```
 */
export type PatchType = "merge" | "json" | "strategic";

/**
 * A typed client for one resource in one cluster, in the spirit of controller-runtime's client.
 * Every API call spends the cluster's request budget and is aborted with the reconcile.
 *
 * Guarantees:
 * - `patchStatus` carries the object's resourceVersion, so a concurrent writer makes it fail with a
 *   409 (see `isConflict` and `retryOnConflict`) instead of being overwritten;
 * - it writes through the status subresource when the cluster's CRD has one and into the object
 *   otherwise, as discovery found; a 404 of the status subresource, or a status the API server
 *   accepted but dropped (the CRD gained a subresource), re-runs discovery and writes again once;
 * - a status write the API server rejects as invalid (422, 400) posts a Warning event
 *   `StatusRejected` and throws a TerminalError (retrying cannot fix it);
 * - a verb the operator did not declare throws a TerminalError, so pre-flight covers every call;
 * - the watch cache takes the answer of each `patch`, `patchStatus` and `apply` of an object it holds (newer by
 *   resourceVersion only), so `cached()` in the next reconcile reads what was written even before the write's watch
 *   event arrived, and a write decided from it carries the current resourceVersion (no 409 from the hub's own write).
 *
 * @example
 * ```ts
 * import type { ResourceClient } from "../../sdk.ts";
 * declare const client: ResourceClient; // a reconcile's `scope.client`
 * const ref = { namespace: "web", name: "hello" };
 * const obj = client.cached(ref) ?? await client.get(ref);
 * await client.patchStatus(obj, { phase: "Ready", observedGeneration: obj.metadata.generation });
 * ```
 */
export interface ResourceClient<T extends StoredObject = StoredObject> {
  /** The resource this client reads and writes. */
  readonly type: ResourceType;
  /** The object as the watch cache holds it (trimmed by the operator's projection); no API call. */
  cached(ref: ObjectRef): T | undefined;
  /** Reads the object from the API server; throws a 404 ApiError (see `isNotFound`) when it does not exist. */
  get(ref: ObjectRef): Promise<T>;
  /** Lists objects from the API server, page by page. */
  list(options?: ListOptions): Promise<T[]>;
  /** Creates the object (apiVersion and kind are filled in). */
  create(object: NewObject): Promise<T>;
  /** Patches the object (JSON merge patch unless `type` says otherwise) and returns it as written. */
  patch(ref: ObjectRef, patch: unknown, options?: { type?: PatchType }): Promise<T>;
  /** Sets status fields (JSON merge patch), guarded by the object's resourceVersion. Resolves once written. */
  patchStatus(object: StoredObject, status: Record<string, unknown>): Promise<void>;
  /** Deletes the object. */
  delete(ref: ObjectRef): Promise<void>;
  /** Server-side apply of `object` (apiVersion and kind are filled in) as `fieldManager`. */
  apply(object: NewObject, options: { fieldManager: string; force?: boolean }): Promise<T>;
}

/**
 * An object to create or apply: metadata with a name, and any other fields.
 *
 * @example
 * ```ts
 * import { kinds, type NewObject, type ReconcileScope } from "../../sdk.ts";
 * declare const scope: ReconcileScope;
 * const html: NewObject = {
 *   metadata: { name: "site-html", namespace: "web", labels: { app: "web" } },
 *   data: { "index.html": "<h1>Hello</h1>" },
 * };
 * await scope.cluster("prod")?.client(kinds.ConfigMap).apply(html, { fieldManager: "site" });
 * ```
 */
export interface NewObject {
  /** At least a name, and a namespace for namespaced resources. */
  metadata: { name: string; namespace?: string; [field: string]: unknown };
  /** `spec`, `data`, `status` or any other field. */
  [field: string]: unknown;
}

/**
 * A `.catch` handler that turns a 404 into `undefined` and rethrows anything else, like controller-runtime's
 * `client.IgnoreNotFound`.
 *
 * @example
 * ```ts
 * import { ignoreNotFound } from "./resource_client.ts";
 * const gone = await Promise.reject(Object.assign(new Error("x"), { status: 404 })).catch(ignoreNotFound);
 * console.log(gone); // undefined
 * ```
 */
export function ignoreNotFound(err: unknown): undefined {
  if (isNotFound(err)) return undefined;
  throw err;
}

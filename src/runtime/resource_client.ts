// The typed client a reconciler uses for one resource in one cluster: cache reads, API reads and writes, no URLs.

import {
  apiVersionOf,
  httpStatusOf,
  isNotFound,
  qualifiedName,
  type ResourceInfo,
  resourcePath,
  type ResourceType,
} from "../kube/mod.ts";
import type { ApiClient, EventSink } from "./api_client.ts";
import type { Request } from "../queue/mod.ts";
import { TerminalError } from "./terminal_error.ts";
import { objectKey, type Projection, type Store, type StoredObject } from "./cache/store.ts";
import { unguarded } from "./cache/field_projection.ts";

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

/** What a client needs from its cluster and operator; shared by every reconcile of that cluster and operator. */
export interface ResourceClientDeps {
  api: ApiClient;
  cluster: string;
  operator: string;
  type: ResourceType;
  verbs: ReadonlySet<Verb>;
  /** The operator's watch cache, for its own resource; absent for other resources. */
  store?: Store;
  project: Projection;
  /** What every object the client returns is seen through (the `checkReads` guard); default the object itself. */
  view?: (obj: StoredObject) => StoredObject;
  /** Discovery's latest answer for this cluster and resource; updated in place by `rediscover`. */
  info: ResourceInfo;
  rediscover(signal?: AbortSignal): Promise<ResourceInfo>;
  events: EventSink;
  /** Path prefixes, computed on first use and shared by every reconcile's client. */
  paths?: { api: string; plural: string };
}

const MERGE = "application/merge-patch+json";
const CONTENT_TYPES: Record<PatchType, string> = {
  merge: MERGE,
  json: "application/json-patch+json",
  strategic: "application/strategic-merge-patch+json",
};

/** A status merge patch of the object itself was answered 200 but not applied: the CRD has a status subresource now. */
class StatusDroppedError extends Error {
  override name = "StatusDroppedError";
}

/**
 * True when a status patch changed something (`wrote` differs from `before` in some field) and none of those changes is
 * in the API server's answer: the whole status was dropped (a status subresource the write did not go through).
 * A field the CRD's schema prunes (the seed article's CRD has no `observedGeneration`) is dropped alone while the
 * others stick: that is not a dropped status, so it is not an error.
 */
function droppedAll(
  before: Record<string, unknown> | undefined,
  wrote: Record<string, unknown>,
  answer: Record<string, unknown> | undefined,
): boolean {
  let changed = false;
  for (const k in wrote) {
    const v = wrote[k];
    if (sameJson(before?.[k], v)) continue;
    changed = true;
    if (sameJson(answer?.[k], v)) return false;
  }
  return changed;
}

/** The ResourceClient over the hub's rate-limited API client; `withSignal` binds one reconcile's signal. */
export class KubeResourceClient<T extends StoredObject = StoredObject> implements ResourceClient<T> {
  readonly #d: ResourceClientDeps;
  readonly #signal: AbortSignal | undefined;

  constructor(deps: ResourceClientDeps, signal?: AbortSignal) {
    this.#d = deps;
    this.#signal = signal;
  }

  get type(): ResourceType {
    return this.#d.type;
  }

  /** The same client, its calls aborted by `signal`. */
  withSignal(signal: AbortSignal): KubeResourceClient<T> {
    return new KubeResourceClient<T>(this.#d, signal);
  }

  cached(ref: ObjectRef): T | undefined {
    const store = this.#d.store;
    if (!store) throw new TerminalError(`${this.#what()} has no watch cache in this hub: use get() instead`);
    const obj = store.get(objectKey(ref));
    return obj && this.#seen(obj);
  }

  async get(ref: ObjectRef): Promise<T> {
    this.#need("get");
    return this.#project(await this.#d.api.request("GET", this.#path(ref), { signal: this.#signal }));
  }

  /** What the client returns of a raw object: the projection, seen through `view` when there is one. */
  #project(raw: unknown): T {
    return this.#seen(this.#d.project(raw as Record<string, unknown>));
  }

  /** `obj` as the client hands it out: through `view` when there is one. */
  #seen(obj: StoredObject): T {
    return (this.#d.view ? this.#d.view(obj) : obj) as T;
  }

  async list(options: ListOptions = {}): Promise<T[]> {
    this.#need("list");
    const out: T[] = [];
    const path = this.#path({ namespace: options.namespace, name: "" });
    let token: string | undefined;
    do {
      const page = await this.#d.api.request<{ items?: Record<string, unknown>[]; metadata?: { continue?: string } }>(
        "GET",
        path,
        {
          query: {
            labelSelector: options.labelSelector,
            fieldSelector: options.fieldSelector,
            limit: 500,
            continue: token,
          },
          signal: this.#signal,
        },
      );
      for (const item of page.items ?? []) out.push(this.#project(item));
      token = page.metadata?.continue || undefined;
    } while (token);
    return out;
  }

  async create(object: NewObject): Promise<T> {
    this.#need("create");
    const body = { apiVersion: apiVersionOf(this.#d.type), kind: this.#d.type.kind, ...object };
    const path = this.#path({ namespace: object.metadata.namespace, name: "" });
    return this.#project(await this.#d.api.request("POST", path, { body, signal: this.#signal }));
  }

  async patch(ref: ObjectRef, patch: unknown, options: { type?: PatchType } = {}): Promise<T> {
    this.#need("patch");
    const contentType = CONTENT_TYPES[options.type ?? "merge"];
    const raw = await this.#d.api.request("PATCH", this.#path(ref), { body: patch, contentType, signal: this.#signal });
    this.#d.store?.takeWritten(raw as Record<string, unknown>);
    return this.#project(raw);
  }

  async delete(ref: ObjectRef): Promise<void> {
    this.#need("delete");
    await this.#d.api.request("DELETE", this.#path(ref), { signal: this.#signal, discardBody: true });
  }

  async apply(object: NewObject, options: { fieldManager: string; force?: boolean }): Promise<T> {
    this.#need("apply");
    const body = { apiVersion: apiVersionOf(this.#d.type), kind: this.#d.type.kind, ...object };
    const raw = await this.#d.api.request("PATCH", this.#path(object.metadata), {
      body,
      // JSON is YAML: server-side apply accepts it under the apply content type.
      contentType: "application/apply-patch+yaml",
      query: { fieldManager: options.fieldManager, force: options.force || undefined },
      signal: this.#signal,
    });
    this.#d.store?.takeWritten(raw as Record<string, unknown>);
    return this.#project(raw);
  }

  async patchStatus(object: StoredObject, status: Record<string, unknown>): Promise<void> {
    this.#need("patchStatus");
    object = unguarded(object);
    const viaSubresource = this.#d.info.statusSubresource;
    const { namespace, name, resourceVersion } = object.metadata;
    try {
      const written = await this.#d.api.request<{ status?: Record<string, unknown> } | undefined>(
        "PATCH",
        this.#path({ namespace, name }, viaSubresource ? "status" : undefined),
        {
          body: { metadata: { resourceVersion }, status },
          contentType: MERGE,
          signal: this.#signal,
          // The watch cache takes the answer (so the next reconcile reads this write); without a cache, only a CRD
          // without a status subresource needs it, to check the status stuck.
          discardBody: viaSubresource && !this.#d.store,
        },
      );
      // A CRD that gained a status subresource since discovery answers 200 to a status patch of the object
      // but drops it: without this check, the object would keep its old status and no event would bring it back.
      if (
        !viaSubresource && written &&
        droppedAll(object.status as Record<string, unknown> | undefined, status, written.status)
      ) {
        throw new StatusDroppedError(
          `the API server ignored the status written to ${namespace}/${name}: the CRD now has a status subresource`,
        );
      }
      if (written) this.#d.store?.takeWritten(written as Record<string, unknown>);
    } catch (err) {
      const code = httpStatusOf(err);
      if (code === 404 || err instanceof StatusDroppedError) {
        // The CRD lost (404) or gained (dropped status) its status subresource since discovery: look
        // again and write once more if it changed; a 404 with an unchanged CRD means the object is gone.
        // Compared with what this write used, not with `info` now: another reconcile may have rediscovered since.
        const now = await this.#d.rediscover(this.#signal);
        if (now.statusSubresource === viaSubresource) throw err;
        return await this.patchStatus(object, status);
      }
      if (code === 422 || code === 400) {
        const message = `the API server rejected the status write: ${(err as Error).message}`;
        await this.#d.events.record(object, "Warning", "StatusRejected", message);
        throw new TerminalError(message, { cause: err });
      }
      throw err;
    }
  }

  #path(ref: ObjectRef, subresource?: string): string {
    const t = this.#d.type;
    const namespace = t.namespaced === false ? undefined : ref.namespace || undefined;
    // The hot path (a status write of a named object in a namespace) skips re-encoding group, version and plural.
    if (namespace && ref.name) {
      const base = this.#d.paths ??= {
        api: resourcePath({ group: t.group, version: t.version, plural: "x" }).slice(0, -2),
        plural: encodeURIComponent(t.plural),
      };
      const path = `${base.api}/namespaces/${encodeURIComponent(namespace)}/${base.plural}/${
        encodeURIComponent(ref.name)
      }`;
      return subresource ? `${path}/${subresource}` : path;
    }
    return resourcePath({
      group: t.group,
      version: t.version,
      plural: t.plural,
      namespace,
      name: ref.name || undefined,
      subresource,
    });
  }

  #need(verb: Verb): void {
    if (!this.#d.verbs.has(verb)) {
      throw new TerminalError(
        `operator ${this.#d.operator} did not declare the verb "${verb}" for ${this.#what()}: add it to the ` +
          `operator's verbs, so the RBAC pre-flight checks it`,
      );
    }
  }

  #what(): string {
    return `${this.#d.type.kind} (${qualifiedName(this.#d.type)}) in cluster ${this.#d.cluster}`;
  }
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

function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

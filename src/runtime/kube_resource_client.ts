// The ResourceClient over the hub's rate-limited API client: paths, verbs the operator declared, status writes that
// find the CRD's status subresource, and the watch cache kept up to date with what was written.

import {
  apiVersionOf,
  httpStatusOf,
  qualifiedName,
  type ResourceInfo,
  resourcePath,
  type ResourceType,
} from "../kube/mod.ts";
import type { ApiClient, EventSink } from "./api_client.ts";
import { TerminalError } from "./terminal_error.ts";
import type { Projection, Store, StoredObject } from "./cache/store.ts";
import { unguarded } from "./cache/field_projection.ts";
import type { ListOptions, NewObject, ObjectRef, PatchType, ResourceClient, Verb } from "./resource_client.ts";

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
    const obj = store.getRef(ref);
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

function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

// The resource clients of one engaged cluster: every KubeResourceClient and event sink of it is built here.

import { discoverResource, type ResourceInfo, type ResourceType } from "../../kube/mod.ts";
import {
  type ApiClient,
  type EventRecorder,
  type EventSink,
  KubeResourceClient,
  type Projection,
  type Store,
  type StoredObject,
  type Verb,
} from "../../runtime/mod.ts";

/** What one client reaches: an operator's own resource (with its watch cache) or one it `uses`. */
export interface ResourceClientSpec {
  operator: string;
  type: ResourceType;
  verbs: Iterable<Verb>;
  project: Projection;
  /** The operator's watch cache, for its own resource only. */
  store?: Store;
  /** What every object the client returns is seen through (the `checkReads` guard); default the object itself. */
  view?: (obj: StoredObject) => StoredObject;
  /** Its events' sink, when the caller made one already (default: `events(type)`). */
  events?: EventSink;
}

/**
 * Builds the typed clients and event sinks of one cluster, all through its budgeted API and its event recorder.
 *
 * Guarantees: each client starts from a ResourceInfo of its own (a status subresource is assumed until discovery says
 * otherwise), returned beside it, which its `rediscover` updates in place; events about objects of a type carry that
 * type's apiVersion and kind.
 */
export class ClusterClients {
  readonly #cluster: string;
  readonly #api: ApiClient;
  readonly #recorder: EventRecorder;

  constructor(cluster: string, api: ApiClient, recorder: EventRecorder) {
    this.#cluster = cluster;
    this.#api = api;
    this.#recorder = recorder;
  }

  /** A typed client for `spec` in this cluster (its calls aborted by `signal`), with the discovery info it reads. */
  resource<U extends StoredObject = StoredObject>(
    spec: ResourceClientSpec,
    signal?: AbortSignal,
  ): { client: KubeResourceClient<U>; info: ResourceInfo } {
    const info: ResourceInfo = { statusSubresource: true };
    const api = this.#api;
    const cluster = this.#cluster;
    const client = new KubeResourceClient<U>({
      api,
      cluster,
      operator: spec.operator,
      type: spec.type,
      verbs: new Set(spec.verbs),
      store: spec.store,
      project: spec.project,
      view: spec.view,
      info,
      rediscover: async (s) => Object.assign(info, await discoverResource(api, cluster, spec.type, s)),
      events: spec.events ?? this.events(spec.type),
    }, signal);
    return { client, info };
  }

  /** Records events about objects of `type` in this cluster. */
  events(type: ResourceType): EventSink {
    const apiVersion = type.group ? `${type.group}/${type.version}` : type.version;
    return {
      record: (object, kind, reason, message) =>
        this.#recorder.record({ apiVersion, kind: type.kind, metadata: object.metadata }, kind, reason, message),
    };
  }
}

// The watches of one cluster: one per namespace watched, and an operator's other watched resources mapped to requests.

import { type KubeClient, resourcePath, type ResourceType } from "../kube/mod.ts";
import {
  objectMeta,
  type Operator,
  type Request,
  Store,
  type StoredObject,
  trimObject,
  type WatchedResource,
  Watcher,
} from "../runtime/mod.ts";
import type { Clock, Logger } from "../util/mod.ts";

/** The cluster a watch runs in. */
export interface WatchContext {
  /** The cluster's name, as map functions see it. */
  cluster: string;
  client: KubeClient;
  /** The namespaces watched; empty means all. A resource that is not namespaced is watched cluster-wide. */
  namespaces: readonly string[];
  clock: Clock;
  log: Logger;
  idleTimeoutMs?: number;
  pageSize?: number;
}

/** The watchers of `type` into `store`, one per namespace watched (one cluster-wide without namespaces). */
export function scopedWatchers(
  type: ResourceType,
  store: Store,
  onChange: (keys: string[]) => void,
  ctx: WatchContext,
  labelSelector?: string,
): Watcher[] {
  const { group, version, plural } = type;
  const query = labelSelector ? `?labelSelector=${encodeURIComponent(labelSelector)}` : "";
  const scopes = ctx.namespaces.length && type.namespaced !== false ? ctx.namespaces : [undefined];
  return scopes.map((namespace) =>
    new Watcher({
      path: resourcePath({ group, version, plural, namespace }) + query,
      namespace,
      client: ctx.client,
      store,
      onChange,
      clock: ctx.clock,
      // Named, so the lines of one watch's retries are told from another's (e.g. an operator's watched resources).
      logger: ctx.log.child({ resource: plural }),
      idleTimeoutMs: ctx.idleTimeoutMs,
      pageSize: ctx.pageSize,
    })
  );
}

/** What the watches of an operator's other resources need besides the cluster. */
export interface OtherWatchesOptions {
  /** The operator's own cached objects in any engaged cluster ([] for one not engaged). */
  cached(cluster: string): StoredObject[];
  /** Queues the operator's objects `requests` name, each in its own cluster. */
  queue(requests: readonly Request[]): void;
}

/**
 * Starts the watches of `op`'s other watched resources (see WatchedResource) that accept this cluster.
 * Returns the watchers (for health) and their runs, which settle once `signal` aborted and they stopped.
 */
export function watchOtherResources(
  op: Operator,
  ctx: WatchContext,
  options: OtherWatchesOptions,
  signal: AbortSignal,
): { watchers: Watcher[]; runs: Promise<void>[] } {
  const watchers: Watcher[] = [];
  for (const w of op.watches ?? []) {
    if (w.clusters && !w.clusters(ctx.cluster)) continue;
    const store = new Store(metadataOnly);
    const map = requestMapper(w, store, op.name, ctx, options.cached);
    watchers.push(...scopedWatchers(w.type, store, (keys) => options.queue(map(keys)), ctx, w.labelSelector));
  }
  return { watchers, runs: watchers.map((watcher) => watcher.start(signal)) };
}

/**
 * Maps changed keys of a watched resource's `store` to the operator's requests.
 *
 * Guarantees: the requests a key mapped to before are returned again with what it maps to now (so an object that
 * stopped naming a target still gets that target reconciled once, and a deleted object its last targets); a map
 * function that throws is logged and counts as mapping to nothing.
 */
export function requestMapper(
  w: WatchedResource,
  store: Store,
  operator: string,
  ctx: Pick<WatchContext, "cluster" | "log">,
  cached: (cluster: string) => StoredObject[],
): (keys: string[]) => Request[] {
  const last = new Map<string, Request[]>();
  return (keys) => {
    const requests: Request[] = [];
    for (const key of keys) {
      const obj = store.get(key);
      const before = last.get(key) ?? [];
      let now: Request[] = [];
      try {
        now = obj ? w.map(obj, ctx.cluster, cached) : [];
      } catch (err) {
        ctx.log.error("watch map function failed", { operator, key, error: err });
      }
      if (now.length) last.set(key, now);
      else last.delete(key);
      requests.push(...before, ...now);
    }
    return requests;
  };
}

/** Requests grouped by cluster as cache keys (`namespace/name`, or `name`), each once. */
export function keysByCluster(requests: readonly Request[]): Map<string, string[]> {
  const byCluster = new Map<string, Set<string>>();
  for (const r of requests) {
    let set = byCluster.get(r.cluster);
    if (!set) byCluster.set(r.cluster, set = new Set());
    set.add(r.namespace ? `${r.namespace}/${r.name}` : r.name);
  }
  return new Map([...byCluster].map(([cluster, set]) => [cluster, [...set]]));
}

/** Keeps labels and annotations too, which map functions of watched resources read. */
export function metadataOnly(raw: Record<string, unknown>): StoredObject {
  return { ...trimObject(raw), metadata: objectMeta(raw, { labels: true }) };
}

// What an operator may be told of its cache in every engaged cluster: each change, and a cluster's objects going.

import type { StoredObject } from "./store.ts";

/**
 * Told of every change of an operator's cached objects (its own resource), in every cluster engaged in this replica:
 * what in-memory indexes over all clusters are maintained from (see `defineHandlers`' `indexes`).
 *
 * Guarantees (from the hub): `changed` is called for every key a watch event or relist changed, after the cache took
 * it (the object as cached, or undefined once it is gone), before any reconcile that the change queues; a cluster's
 * objects cached before the operator joined are passed once as changed; `forget(cluster)` is called once the
 * cluster's watches stopped (disengaged, the hub stopped), and no `changed` of that cluster follows until it is
 * engaged again. A call that throws is logged with the operator, cluster and key, and the others go on.
 *
 * @example Counting objects per cluster
 * ```ts
 * import type { CacheObserver } from "./cache_observer.ts";
 * const seen = new Map<string, Set<string>>();
 * const counter: CacheObserver = {
 *   changed(cluster, key, object) {
 *     const keys = seen.get(cluster) ?? seen.set(cluster, new Set()).get(cluster)!;
 *     if (object) keys.add(key);
 *     else keys.delete(key);
 *   },
 *   forget: (cluster) => void seen.delete(cluster),
 * };
 * counter.changed("prod", "ns/a", { metadata: { name: "a" } });
 * console.log(seen.get("prod")?.size); // 1
 * ```
 */
export interface CacheObserver {
  /** The object under `key` (`namespace/name`) in `cluster` changed (as cached now), or went (undefined). */
  changed(cluster: string, key: string, object: StoredObject | undefined): void;
  /** Every object of `cluster` went from this replica's caches. */
  forget(cluster: string): void;
}

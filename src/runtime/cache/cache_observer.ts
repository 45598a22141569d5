// What an operator may be told of its cache in every engaged cluster: each change, and a cluster's objects going.

import type { Request } from "../../queue/mod.ts";
import type { StoredObject } from "./store.ts";

/**
 * Told of every change of an operator's cached objects (its own resource), in every cluster engaged in this replica:
 * what in-memory indexes over all clusters are maintained from (see `defineHandlers`' `indexes`).
 *
 * Guarantees (from the hub): `changed` is called for every object a watch event or relist changed, with the same
 * Request that is queued for it, after the cache took it (the object as cached, or undefined once it is gone), before any reconcile that the change queues; a cluster's
 * objects cached before the operator joined are passed once as changed; `forget(cluster)` is called once the
 * cluster's watches stopped (disengaged, the hub stopped), and no `changed` of that cluster follows until it is
 * engaged again. A call that throws is logged with the operator, cluster, namespace and name, and the others go on.
 *
 * @example Counting objects per cluster
 * ```ts
 * import type { CacheObserver } from "./cache_observer.ts";
 * const seen = new Map<string, Set<string>>();
 * const counter: CacheObserver = {
 *   changed({ cluster, namespace, name }, object) {
 *     const keys = seen.get(cluster) ?? seen.set(cluster, new Set()).get(cluster)!;
 *     if (object) keys.add(`${namespace}/${name}`);
 *     else keys.delete(`${namespace}/${name}`);
 *   },
 *   forget: (cluster) => void seen.delete(cluster),
 * };
 * counter.changed({ cluster: "prod", namespace: "ns", name: "a" }, { metadata: { name: "a", namespace: "ns" } });
 * console.log(seen.get("prod")?.size); // 1
 * ```
 */
export interface CacheObserver {
  /** The object `request` names changed (as cached now), or went (undefined). */
  changed(request: Request, object: StoredObject | undefined): void;
  /** Every object of `cluster` went from this replica's caches. */
  forget(cluster: string): void;
}

// The contract between the hub and an operator it hosts: which resource, what it does with it, how to reconcile.

import type { PermissionCheck, ResourceType } from "../kube/mod.ts";
import type { AdmissionWebhook } from "./admission.ts";
import type { CacheObserver } from "./cache/cache_observer.ts";
import type { Reconciler, Request } from "./reconciler.ts";
import type { Verb } from "./resource_client.ts";
import type { Projection, StoredObject } from "./cache/store.ts";

/**
 * Another resource an operator uses, and what it does with it (checked in pre-flight like its own).
 *
 * @example
 * ```ts
 * import { defineOperator, kinds, type ResourceUse } from "../../sdk.ts";
 * // The ConfigMaps a Website operator applies, in the namespace "web" only.
 * const configMaps: ResourceUse = { type: kinds.ConfigMap, verbs: ["get", "apply"], namespaces: ["web"] };
 * const site = defineOperator({
 *   name: "site",
 *   resource: { group: "examples.operator-hub.dev", version: "v1", kind: "Website", plural: "websites" },
 *   uses: [configMaps],
 *   async reconcile() {},
 * });
 * console.log(site.uses.length); // 1
 * ```
 */
export interface ResourceUse {
  /** The resource. */
  type: ResourceType;
  /** What the operator does with it. */
  verbs: readonly Verb[];
  /** What its clients return of each object (e.g. a ConfigMap's `data`). Default: `trimObject`. */
  project?: Projection;
  /**
   * The only namespaces it is used in: its namespaced pre-flight checks are made in each of these instead of the
   * hub's `--namespace` list or cluster-wide (for an operator granted Roles in a few namespaces).
   */
  namespaces?: readonly string[];
}

/**
 * Another resource watched in every engaged cluster, whose changes queue the operator's own objects,
 * like controller-runtime's `Watches(type, EnqueueRequestsFromMapFunc(map))`.
 *
 * Guarantees: `map` runs on every add and change; on a delete the requests its last call returned
 * for that object are queued again, so a deleted object still wakes what it was mapped to.
 *
 * @example
 * ```ts
 * import { kinds, type WatchedResource } from "../../sdk.ts";
 * // A changed ConfigMap queues every Website of its namespace whose spec.configMap names it.
 * const configMaps: WatchedResource = {
 *   type: kinds.ConfigMap,
 *   metadataOnly: true,
 *   map: (cm, cluster, cached) =>
 *     cached(cluster)
 *       .filter((site) => site.metadata.namespace === cm.metadata.namespace)
 *       .filter((site) => (site.spec as { configMap?: string } | undefined)?.configMap === cm.metadata.name)
 *       .map((site) => ({ cluster, namespace: site.metadata.namespace ?? "", name: site.metadata.name })),
 * };
 * ```
 */
export interface WatchedResource {
  /** The resource (its `list` and `watch` are checked in pre-flight). */
  type: ResourceType;
  /** Only in the clusters this accepts (default every engaged cluster). */
  clusters?(cluster: string): boolean;
  /** Only objects with these labels are watched, e.g. `app=web`. */
  labelSelector?: string;
  /**
   * What its cache keeps of each object (what `map` reads). Default: identity, labels and annotations (and `spec` and
   * `status`); with `metadataOnly`, the PartialObjectMetadata, which `project` then receives instead of the raw object.
   */
  project?: Projection;
  /**
   * Lists and watches it as metadata only (controller-runtime's `builder.OnlyMetadata`, kube-rs's `metadata_watcher`):
   * the apiserver sends each object as a PartialObjectMetadata, so its other fields (a ConfigMap's or Secret's
   * `data`, a Deployment's spec) never cross the wire, and `map` receives a PartialObjectMetadata (`apiVersion`
   * `meta.k8s.io/v1`, `kind` `PartialObjectMetadata`, `metadata` only). A server that answers full objects anyway is
   * read the same way: the cache keeps only the metadata. Every change of an object still reaches `map` (any change
   * moves its resourceVersion). Default false.
   */
  metadataOnly?: boolean;
  /** Watched in these namespaces only (its pre-flight checks too), instead of the hub's `--namespace` list. */
  namespaces?: readonly string[];
  /**
   * Only these objects are watched and cached, each by a watch of its own (`fieldSelector=metadata.name=NAME` in its
   * namespace), like a per-object informer: re-evaluated whenever the operator's own objects change in the cluster
   * the watch runs in. Its `list` and `watch` are not pre-flighted (the namespaces are not known ahead); a watch
   * refused by RBAC shows in the operator's health.
   */
  objects?(cached: (cluster: string) => StoredObject[]): { namespace: string; name: string }[];
  /**
   * Runs in a cluster only while this returns true (default: wherever `clusters` accepts), re-evaluated whenever the
   * operator's objects change in that cluster (in any engaged cluster with `neededAcrossClusters`); a watch no longer
   * needed stops and drops its cache. A watch that starts queues, once its first list is in, the operator's objects
   * that act on that cluster (its own objects there and what `onEngage` names): a change made before the list, a child
   * deleted by hand among them, is not missed. `cached(c)` lists the operator's own cached objects in cluster `c`,
   * `count(c)` counts them without a copy.
   */
  neededIn?(cluster: string, cached: (cluster: string) => StoredObject[], count: (cluster: string) => number): boolean;
  /**
   * `neededIn` reads other clusters' objects (a Mirror in its home cluster names its target clusters): it is also
   * re-evaluated, in every engaged cluster, when the operator's objects change anywhere. Default false.
   */
  neededAcrossClusters?: boolean;
  /**
   * The operator's objects to reconcile for a changed object seen in `cluster` (any cluster, `cached(c)` lists
   * the operator's own cached objects in cluster `c`). Return [] for none.
   */
  map(object: StoredObject, cluster: string, cached: (cluster: string) => StoredObject[]): Request[];
}

/**
 * One operator: a resource it watches in every engaged cluster, and a reconciler. Everything the
 * runtime does for it (discovery, RBAC pre-flight, watch, cache, queue, typed client) follows from
 * these declarations.
 *
 * @example
 * ```ts
 * import { defineOperator, type Operator } from "../../sdk.ts";
 * const hello: Operator = defineOperator({
 *   name: "hello",
 *   resource: { group: "examples.operator-hub.dev", version: "v1", kind: "Greeting", plural: "greetings" },
 *   verbs: ["patchStatus"],
 *   async reconcile() {},
 * });
 * console.log(hello.name, hello.verbs, hello.resource.plural); // "hello" [ "patchStatus" ] "greetings"
 * ```
 */
export interface Operator<T extends StoredObject = StoredObject> {
  /** Unique in a hub; the `controller` label in metrics, the key in `/status` operators. No "/". */
  readonly name: string;
  /** The resource it watches and reconciles. */
  readonly resource: ResourceType;
  /**
   * The clusters its own resource lives in (default every engaged cluster). Elsewhere the resource is neither
   * discovered, pre-flighted nor watched: only the operator's `uses` and `watches` are checked and run there, so
   * its reconciles can still reach into those clusters (e.g. a resource that lives only in the home cluster).
   */
  readonly resourceClusters?: (cluster: string) => boolean;
  /** What the reconciler does with its own resource (`list` and `watch` are implied). */
  readonly verbs: readonly Verb[];
  /** True when it posts Kubernetes Events (pre-flight then checks `create events`). */
  readonly events: boolean;
  /** Other resources it reads or writes, in any engaged cluster. */
  readonly uses: readonly ResourceUse[];
  /** Other resources whose changes queue its objects (see WatchedResource). */
  readonly watches?: readonly WatchedResource[];
  /**
   * True when it adopts children (`owns`): their owner reference sets `blockOwnerDeletion`, which the
   * OwnerReferencesPermissionEnforcement admission plugin (on in OpenShift) allows only with `update` of
   * `<plural>/finalizers` of its resource, so the pre-flight checks that too.
   */
  readonly adopts?: boolean;
  /**
   * Its objects to reconcile when it becomes ready in an engaged cluster (its pre-flight there passed): those
   * that act on that cluster, so a cluster engaged later is served at once. `cached(c)` lists its cached objects
   * in cluster `c` ([] before that cluster's first list, which queues them all anyway).
   */
  readonly onEngage?: (cluster: string, cached: (cluster: string) => StoredObject[]) => Request[];
  /**
   * The finalizers it puts on objects of its resource: `operator-hub cleanup` (and `--cleanup-on-remove`) removes them
   * after an uninstall or a cluster's removal, so no namespace hangs on a hub that is gone.
   */
  readonly finalizers?: readonly string[];
  /** What the cache keeps of each object. Default: `trimObject`. Operators of one resource with the same projection share one watch and cache. */
  readonly project?: Projection;
  /**
   * The fields of its objects it reads, when it declared them (`project` is then their `fieldProjection`): a hub
   * built with `checkReads` makes reading any other field of a cached object an UndeclaredFieldError.
   */
  readonly reads?: readonly string[];
  /**
   * A cheap pre-check on the cached object, from its current state only (never the event): false
   * means a reconcile would certainly do nothing, so the key is not queued. It keeps the watch
   * event of the operator's own write, and every finished object at startup, out of the queue.
   * Deleted objects are always passed on. (A method, so an operator of typed objects is still an `Operator`: the
   * hub passes it only objects of its own resource.)
   */
  needsReconcile?(object: T): boolean;
  /** Reconciles one object at a time. */
  readonly reconciler: Reconciler<T>;
  /** Told of every change of its cache in every engaged cluster (what `defineHandlers`' indexes are built from). */
  readonly cacheObserver?: CacheObserver;
  /**
   * Its admission webhooks (`validate` and `mutate` on defineOperator and defineHandlers): served by a hub run with
   * `--webhook-bind-address`, installed in every engaged cluster it owns.
   */
  readonly webhooks?: readonly AdmissionWebhook[];
}

/**
 * The RBAC checks an operator needs in a cluster, derived from its declarations: `list` and `watch`
 * of its resource, each declared verb (`patchStatus` as `patch` of `status`, or of the object itself
 * when the CRD has no status subresource; `apply` as `create` and `patch`, as an apply creates what is missing),
 * `create events` when it posts events, `update` of `<plural>/finalizers` when it adopts children (`adopts`: the
 * owner reference's blockOwnerDeletion needs it where OwnerReferencesPermissionEnforcement is on), and the verbs
 * of every other resource it uses. With `namespaces`,
 * namespaced checks are made in each (a use or watch that names its own `namespaces` is checked in those instead;
 * a per-object watch is not checked).
 * With `cluster`, only the watched resources whose `clusters` accept it are checked, and in a cluster
 * its `resourceClusters` refuses, neither its own resource nor events are.
 */
export function permissionsFor(
  operator: Operator,
  options: { statusSubresource: boolean; namespaces: readonly string[]; cluster?: string },
): PermissionCheck[] {
  const checks = new Map<string, { check: PermissionCheck; namespaced: boolean; namespaces?: readonly string[] }>();
  const add = (type: ResourceType, verb: string, subresource?: string, namespaces?: readonly string[]) => {
    const check = { verb, group: type.group, resource: type.plural, ...(subresource ? { subresource } : {}) };
    const key = `${verb} ${type.plural}.${type.group}/${subresource ?? ""}`;
    const before = checks.get(key);
    // Needed everywhere (no `namespaces`) wins over needed in a few; needs in a few namespaces add up.
    const scoped = namespaces && (!before || before.namespaces)
      ? [...new Set([...(before?.namespaces ?? []), ...namespaces])]
      : undefined;
    checks.set(key, { check, namespaced: type.namespaced !== false, ...(scoped ? { namespaces: scoped } : {}) });
  };
  const addAll = (type: ResourceType, verbs: readonly Verb[], statusSubresource: boolean, ns?: readonly string[]) => {
    for (const verb of verbs) {
      if (verb === "patchStatus") add(type, "patch", statusSubresource ? "status" : undefined, ns);
      else if (verb === "apply") {
        add(type, "create", undefined, ns);
        add(type, "patch", undefined, ns);
      } else add(type, verb, undefined, ns);
    }
  };
  const cluster = options.cluster;
  if (cluster === undefined || ownsResourceIn(operator, cluster)) {
    addAll(operator.resource, ["list", "watch", ...operator.verbs], options.statusSubresource);
    if (operator.events) add(EVENTS, "create");
    if (operator.adopts) add(operator.resource, "update", "finalizers");
  }
  for (const use of operator.uses) addAll(use.type, use.verbs, true, use.namespaces);
  for (const watch of operator.watches ?? []) {
    if (watch.objects) continue; // per-object watches: their namespaces are known only at run time
    if (cluster === undefined || !watch.clusters || watch.clusters(cluster)) {
      addAll(watch.type, ["list", "watch"], true, watch.namespaces);
    }
  }
  return [...checks.values()].flatMap(({ check, namespaced, namespaces }) => {
    const scope = namespaces ?? options.namespaces;
    return namespaced && scope.length ? scope.map((namespace) => ({ ...check, namespace })) : [check];
  });
}

/** Whether `operator`'s own resource lives (is discovered, pre-flighted, watched and reconciled) in `cluster`. */
export function ownsResourceIn(operator: Pick<Operator, "resourceClusters">, cluster: string): boolean {
  return operator.resourceClusters?.(cluster) ?? true;
}

const EVENTS: ResourceType = { group: "", version: "v1", kind: "Event", plural: "events" };

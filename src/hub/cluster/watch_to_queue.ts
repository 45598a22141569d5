// From a watch event to the queue: one operator's slot in one engaged cluster (its shared informer, the filter of what
// needs a reconcile, its cache observer) and how it joins the watch once its pre-flight passed.
//
// The path, top to bottom (one request type, `Request` {cluster, namespace, name}, from the informer to reconcile()):
//   1. runtime/cache/watcher.ts   Watcher applies a watch event (or a list page) to the Store: store keys `namespace/name`.
//   2. runtime/cache/informer.ts  Informer turns the changed keys into Requests of its cluster, once per change.
//   3. this file                  cacheListener tells the operator's CacheObserver (its indexes) first; then the slot's
//                                 `changed` drops what `needsReconcile` refuses and passes the rest to `onChange`.
//   4. hub.ts                     onChange → Controller.enqueue(operator, requests) → FairWorkQueue holds {operator, request}.
//   5. runtime/controller.ts      A worker takes the key and calls reconcile(request, scope) with that same Request.

import type { QueuePriority, Request } from "../../queue/mod.ts";
import {
  type ClusterConnection,
  Informer,
  type InformerListener,
  type Operator,
  ownsResourceIn,
  readGuard,
  type ReconcileTarget,
  type StoredObject,
  TaskSet,
  trimObject,
} from "../../runtime/mod.ts";
import type { Logger } from "../../util/mod.ts";
import type { ClusterClients } from "./_cluster_clients.ts";
import type { Slot } from "./_cluster_slot.ts";
import { scopedWatchers, type WatchContext } from "./_watched_resources.ts";

/** What a slot is wired to: its cluster's watches, informers, clients, queue and neighbours. */
export interface SlotWiring {
  /** The cluster (its name, client, namespaces, clock and logger) the watches run in. */
  watch: WatchContext;
  /** The cluster's informers by resource (and projection), shared by operators of one resource: added to here. */
  informers: Map<string, Informer>;
  clients: ClusterClients;
  /**
   * Where changed objects go to be queued: at `live` priority for watch events, at `low` for what a list, a relist or
   * a resync found (see EngagedClusterOptions.onChange).
   */
  onChange(operator: string, requests: readonly Request[], priority: QueuePriority): void;
  /** Another engaged cluster, for reconcilers that reach across clusters. */
  lookup(
    cluster: string,
  ): { connection(operator: string, signal: AbortSignal): ClusterConnection | undefined } | undefined;
  /** The names of every engaged cluster, for a reconcile's `clusters()`. */
  clusters(): string[];
  /** Reading a field an operator's `reads` does not declare throws (see HubOptions.checkReads). */
  checkReads?: boolean;
}

/**
 * The slot of `op` in one cluster, and its background tasks (open; the caller closes them while it does not reconcile).
 *
 * Guarantees: operators of one resource and projection share one informer (where the operator does not own its
 * resource, its informer stays empty and unshared: nothing starts it); the informer's requests reach `onChange` as they
 * are (the same objects), minus the objects `needsReconcile` says need nothing; the slot starts in pre-flight
 * (`registering`) and nothing reaches `onChange` before `joinWatch`.
 */
export function wireSlot(op: Operator, w: SlotWiring): { slot: Slot; tasks: TaskSet } {
  const cluster = w.watch.cluster;
  const project = op.project ?? trimObject;
  const owns = ownsResourceIn(op, cluster);
  // Operators of one resource share its watch and cache when they keep the same fields of each object.
  let key = `${op.resource.group}/${op.resource.version}/${op.resource.plural}`;
  let informer = owns ? w.informers.get(key) : undefined;
  if (informer && informer.projection !== project) {
    key = `${key}#${op.name}`;
    informer = undefined;
  }
  const type = op.resource;
  informer ??= new Informer({
    cluster,
    projection: project,
    watches: (store, onChange) => scopedWatchers(type, store, onChange, w.watch),
  });
  // Where the operator does not own its resource, its cache stays empty and unshared: nothing watches it.
  if (owns) w.informers.set(key, informer);
  const events = w.clients.events(op.resource);
  const view = w.checkReads && op.reads ? readGuard(op.name, op.resource.kind, op.reads) : undefined;
  const { client, info } = w.clients.resource({
    operator: op.name,
    type: op.resource,
    verbs: op.verbs,
    project,
    store: informer.store,
    view,
    events,
  });
  const log = w.watch.log.child({ operator: op.name });
  const clusters = w.clusters;
  const tasks: TaskSet = new TaskSet({
    scopeFor: (key, signal) => ({
      client: client.withSignal(signal),
      events,
      cluster: (name) => w.lookup(name)?.connection(op.name, signal),
      clusters,
      background: tasks,
      signal,
      logger: log,
      reconcileId: `task:${key}`,
    }),
    clock: w.watch.clock,
    logger: log,
  });
  const slot: Slot = {
    operator: op,
    owns,
    informer,
    others: [],
    info,
    preflight: { state: "registering", error: null, missing: [], attempts: 0 },
    changed: changedFilter(op, informer, w, view),
    target: {
      reconciler: op.reconciler as ReconcileTarget["reconciler"],
      client,
      events,
      cluster: (name, signal) => w.lookup(name)?.connection(op.name, signal),
      clusters,
      background: tasks,
    },
  };
  return { slot, tasks };
}

/** What the slot passes on to the queue: every changed request, minus the objects `needsReconcile` says need nothing. */
function changedFilter(
  op: Operator,
  informer: Informer,
  w: SlotWiring,
  view?: (obj: StoredObject) => StoredObject,
): InformerListener {
  const needs = op.needsReconcile as ((o: unknown) => boolean) | undefined;
  if (!needs) return (requests, priority) => w.onChange(op.name, requests, priority);
  let failed = false;
  // The operator's own code: one that throws passes the object on (its reconcile decides), logged once per slot.
  const needed = (obj: StoredObject): boolean => {
    try {
      return needs(view ? view(obj) : obj);
    } catch (err) {
      if (!failed) {
        w.watch.log.error("needsReconcile threw; its objects are reconciled", { operator: op.name, error: err });
      }
      failed = true;
      return true;
    }
  };
  return (requests, priority) => {
    const wanted: Request[] = [];
    for (const r of requests) {
      const obj = informer.cached(r);
      if (obj === undefined || needed(obj)) wanted.push(r);
    }
    if (wanted.length) w.onChange(op.name, wanted, priority);
  };
}

/**
 * The operator's pre-flight passed: its cache observer, then its queue, join its resource's informer, which starts
 * (once for all its operators) until `signal` aborts.
 *
 * Guarantees: the cache observer is told of a change before the reconcile that change queues (an index is current
 * when the reconcile reads it); joining an informer already running, both are first told everything it cached (`low`).
 */
export function joinWatch(slot: Slot, log: Logger, signal: AbortSignal): void {
  const informer = slot.informer;
  const observe = cacheListener(slot, log);
  if (observe) informer.addListener(observe, "low");
  slot.preflight = null;
  // Joining a watch that already runs: everything cached so far is new to this operator.
  informer.addListener(slot.changed, informer.started ? "low" : undefined);
  informer.start(signal);
}

/** The operator's cache observer, as a listener of its informer (its failures logged on `log`, never thrown). */
export function cacheListener(slot: Slot, log: Logger): InformerListener | undefined {
  const observer = slot.operator.cacheObserver;
  if (!observer) return undefined;
  const informer = slot.informer;
  return (requests) => {
    for (const request of requests) {
      try {
        observer.changed(request, informer.cached(request));
      } catch (err) {
        const { namespace, name } = request;
        log.error("cache observer failed", { operator: slot.operator.name, namespace, name, error: err });
      }
    }
  };
}

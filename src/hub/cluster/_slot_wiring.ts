// Wires one operator's slot in an engaged cluster: its (shared) watch and cache, clients, change filter, background
// tasks and cache observer.

import type { NamespacedName, QueuePriority } from "../../queue/mod.ts";
import {
  type ClusterConnection,
  Informer,
  objectName,
  type Operator,
  ownsResourceIn,
  type ReconcileTarget,
  TaskSet,
  trimObject,
} from "../../runtime/mod.ts";
import type { Clock, Logger } from "../../util/mod.ts";
import type { ClusterClients } from "./_cluster_clients.ts";
import type { Slot } from "./_cluster_slot.ts";

/** What a slot is wired to: its cluster's informers, clients, queue and neighbours. */
export interface SlotWiring {
  cluster: string;
  /** The cluster's informers by resource (and projection), shared by operators of one resource: added to here. */
  informers: Map<string, Informer>;
  clients: ClusterClients;
  /** Where changed objects go to be queued (see EngagedClusterOptions.onChange). */
  onChange(cluster: string, operator: string, requests: readonly NamespacedName[], priority: QueuePriority): void;
  /** Another engaged cluster, for reconcilers that reach across clusters. */
  lookup(
    cluster: string,
  ): { connection(operator: string, signal: AbortSignal): ClusterConnection | undefined } | undefined;
  /** The names of every engaged cluster, for a reconcile's `clusters()`. */
  clusters(): string[];
  clock: Clock;
  log: Logger;
}

/**
 * The slot of `op` in one cluster, and its background tasks (open; the caller closes them while it does not reconcile).
 *
 * Guarantees: operators of one resource and projection share one informer (where the operator does not own its
 * resource, its informer stays empty and unshared: nothing watches it); changed keys reach `onChange` as typed
 * requests once, minus the objects `needsReconcile` says need nothing; the slot starts in pre-flight (`registering`).
 */
export function wireSlot(op: Operator, w: SlotWiring): { slot: Slot; tasks: TaskSet } {
  const project = op.project ?? trimObject;
  const owns = ownsResourceIn(op, w.cluster);
  // Operators of one resource share its watch and cache when they keep the same fields of each object.
  let key = `${op.resource.group}/${op.resource.version}/${op.resource.plural}`;
  let informer = owns ? w.informers.get(key) : undefined;
  if (informer && informer.projection !== project) {
    key = `${key}#${op.name}`;
    informer = undefined;
  }
  informer ??= new Informer(project);
  // Where the operator does not own its resource, its cache stays empty and unshared: nothing watches it.
  if (owns) w.informers.set(key, informer);
  const store = informer.store;
  const events = w.clients.events(op.resource);
  const { client, info } = w.clients.resource({
    operator: op.name,
    type: op.resource,
    verbs: op.verbs,
    project,
    store,
  });
  const needs = op.needsReconcile as ((o: unknown) => boolean) | undefined;
  // The cache's keys become typed requests here, once, on their way to the queue.
  const changed = needs
    ? (keys: string[], priority: QueuePriority) => {
      const wanted: NamespacedName[] = [];
      for (const k of keys) {
        const obj = store.get(k);
        if (obj === undefined || needs(obj)) wanted.push(objectName(k));
      }
      if (wanted.length) w.onChange(w.cluster, op.name, wanted, priority);
    }
    : (keys: string[], priority: QueuePriority) => w.onChange(w.cluster, op.name, keys.map(objectName), priority);
  const log = w.log.child({ operator: op.name });
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
    clock: w.clock,
    logger: log,
  });
  const slot: Slot = {
    operator: op,
    owns,
    informer,
    others: [],
    info,
    preflight: { state: "registering", error: null, missing: [], attempts: 0 },
    changed,
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

/** The operator's cache observer, as a listener of its informer's changed keys (its failures logged, never thrown). */
export function cacheListener(slot: Slot, cluster: string, log: Logger): ((keys: string[]) => void) | undefined {
  const observer = slot.operator.cacheObserver;
  if (!observer) return undefined;
  const store = slot.informer.store;
  return (keys) => {
    for (const key of keys) {
      try {
        observer.changed(cluster, key, store.get(key));
      } catch (err) {
        log.error("cache observer failed", { operator: slot.operator.name, key, error: err });
      }
    }
  };
}

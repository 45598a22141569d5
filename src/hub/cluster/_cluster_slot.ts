// The per-operator slots of one engaged cluster (watch, cache, pre-flight) and the health entry built from them.

import type { ResourceInfo } from "../../kube/mod.ts";
import type {
  Informer,
  InformerListener,
  Operator,
  ReconcileTarget,
  Watcher,
  WatchPhase,
  WatchSnapshot,
} from "../../runtime/mod.ts";
import { worstState } from "../../runtime/mod.ts";
import type { ClusterHealth, OperatorHealth } from "../health/cluster_health.ts";

/** Pre-flight progress of one operator; null once it passed. */
export interface Preflight {
  state: WatchPhase | "registering";
  error: string | null;
  missing: string[];
  attempts: number;
}

/** One operator in this cluster. */
export interface Slot {
  readonly operator: Operator;
  /** False where the operator's `resourceClusters` refuses this cluster: only its `uses` and `watches` run here. */
  readonly owns: boolean;
  /** Its resource's watch and cache here, shared with the operators of the same resource and projection. */
  readonly informer: Informer;
  /** The watches of its other watched resources here (see WatchedResource); replaced once they start. */
  others: Watcher[];
  readonly info: ResourceInfo;
  readonly target: ReconcileTarget;
  preflight: Preflight | null;
  /** Passes the changed requests on at `priority`, minus objects the operator says need nothing (watch_to_queue.ts). */
  readonly changed: InformerListener;
}

/** What a health entry needs besides the slots: the time, and the shared queue's depths. */
export interface HealthInputs {
  now: number;
  queueDepth: (operator: string) => number;
  queueTotal: number;
  wedgedAfterMs: number;
}

/** One cluster's health entry: each operator's pre-flight state until it passed, then the worst of its watches. */
export function slotsHealth(slots: ReadonlyMap<string, Slot>, inputs: HealthInputs): ClusterHealth {
  const { now, queueDepth, queueTotal, wedgedAfterMs } = inputs;
  const operators: Record<string, OperatorHealth> = {};
  const snapshots = new Map<Informer, WatchSnapshot[]>();
  let preflightAttempts = 0;
  for (const [name, slot] of slots) {
    const p = slot.preflight;
    const store = slot.informer.store;
    if (p) {
      preflightAttempts += p.attempts;
      operators[name] = {
        state: p.state,
        synced: false,
        objects: store.size,
        queue: queueDepth(name),
        lastError: p.error,
        missingPermissions: p.missing,
      };
      continue;
    }
    let snaps = snapshots.get(slot.informer);
    if (!snaps) {
      // Where the operator does not own its resource, its health is that of its other watches (or, with none
      // here, of its passed pre-flight).
      const watchers = slot.owns ? slot.informer.watchers : slot.others;
      snapshots.set(slot.informer, snaps = watchers.map((w) => w.snapshot()));
    }
    // The worst of its watches (one per namespace with --namespace), not the first that is not watching.
    const worst = snaps.length ? worstState(snaps.map((s) => s.phase)) : undefined;
    operators[name] = {
      state: worst ?? (slot.owns ? "connecting" : "watching"),
      synced: slot.owns ? snaps.length > 0 && snaps.every((s) => s.synced) : snaps.every((s) => s.synced),
      objects: store.size,
      queue: queueDepth(name),
      lastError: snaps.map((s) => s.lastError).find((e) => e) ?? null,
      missingPermissions: [],
      ...(slot.others.length ? { watchedObjects: watchedObjects(slot.others) } : {}),
    };
  }
  const ops = Object.values(operators);
  const snaps = [...snapshots.values()].flat();
  const lastEventAt = Math.max(...snaps.map((s) => s.lastEventAt ?? -Infinity));
  return {
    state: ops.length ? worstState(ops.map((o) => o.state)) : "watching",
    synced: ops.every((o) => o.synced),
    objects: [...new Set([...slots.values()].map((s) => s.informer.store))].reduce((n, s) => n + s.size, 0),
    queue: queueTotal,
    lastEventAgeSeconds: Number.isFinite(lastEventAt) ? Math.round((now - lastEventAt) / 100) / 10 : null,
    lastError: ops.map((o) => o.lastError).find((e) => e) ?? null,
    connectAttempts: preflightAttempts + snaps.reduce((n, s) => n + s.connectAttempts, 0),
    relists: snaps.reduce((n, s) => n + s.relists, 0),
    watchdogAborts: snaps.reduce((n, s) => n + s.watchdogAborts, 0),
    missingPermissions: [...new Set(ops.flatMap((o) => o.missingPermissions))],
    wedged: snaps.some((s) => now - s.heartbeatAt > wedgedAfterMs),
    operators,
  };
}

/** Objects the watchers cache, each store once (the per-namespace watchers of one resource share theirs). */
function watchedObjects(watchers: readonly Watcher[]): number {
  return [...new Set(watchers.map((w) => w.store))].reduce((n, store) => n + store.size, 0);
}

/** Where a cluster's first contact stands (src/hub/cluster/_reach.ts): its state, its last error, its failed attempts. */
export interface FirstContact {
  state: WatchPhase | "registering";
  error: string | null;
  attempts: number;
}

/**
 * The health entry of a cluster whose server has not answered yet (its slots are not built): every operator in the
 * first contact's state (`registering` before it, `connecting`, `unreachable` with its error), nothing cached, and the
 * failed attempts as `connectAttempts`.
 */
export function contactHealth(
  operators: readonly string[],
  contact: FirstContact,
  inputs: HealthInputs,
): ClusterHealth {
  const ops: Record<string, OperatorHealth> = {};
  for (const name of operators) {
    ops[name] = {
      state: contact.state,
      synced: false,
      objects: 0,
      queue: inputs.queueDepth(name),
      lastError: contact.error,
      missingPermissions: [],
    };
  }
  return {
    state: contact.state,
    synced: false,
    objects: 0,
    queue: inputs.queueTotal,
    lastEventAgeSeconds: null,
    lastError: contact.error,
    connectAttempts: contact.attempts,
    relists: 0,
    watchdogAborts: 0,
    missingPermissions: [],
    wedged: false,
    operators: ops,
  };
}

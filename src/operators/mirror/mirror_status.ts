// The Mirror's status: one row per target cluster, the Ready condition and counts, rebuilt only when something changed.

/** The state of one target cluster's copy. */
export type TargetState = "InSync" | "Pending" | "Unreachable" | "Forbidden" | "Conflict";

/** One target cluster's row in `status.targets`. */
export interface TargetRow {
  cluster: string;
  state: TargetState;
  /** The source resourceVersion the copy was last brought to. */
  observedSourceResourceVersion: string | null;
  lastError: string | null;
  /** When the copy was last found or made equal to the source. */
  lastSyncTime: string | null;
}

/** A row as a reconcile computed it, before times are carried over. */
export type TargetOutcome = Omit<TargetRow, "lastSyncTime" | "observedSourceResourceVersion"> & {
  /** Set when the copy is in sync with this source version. */
  syncedTo?: string;
};

/** The Mirror's `status`. */
export interface MirrorStatus {
  observedGeneration?: number;
  /** `Error` when the Mirror cannot be acted on at all (e.g. a refused target namespace), else `Ok`. */
  state: "Ok" | "Error";
  /** Why, in one line: the Ready condition's message. */
  message: string;
  source: string;
  synced: string;
  syncedClusters: number;
  totalClusters: number;
  targets: TargetRow[];
  conditions: {
    type: "Ready";
    status: "True" | "False";
    reason: string;
    message: string;
    lastTransitionTime: string;
  }[];
}

/**
 * The new status from this reconcile's outcomes and the previous status.
 *
 * Guarantees: equal outcomes give a status equal to `previous` (times are carried over unless the row's state or
 * synced version changed), so the caller writes only when `sameStatus` is false.
 */
export function nextStatus(
  previous: Partial<MirrorStatus> | undefined,
  outcomes: TargetOutcome[],
  context: { generation?: number; source: string; now: string },
): MirrorStatus {
  const before = new Map((previous?.targets ?? []).map((r) => [r.cluster, r]));
  const targets = outcomes.map((o): TargetRow => {
    const old = before.get(o.cluster);
    const observed = o.syncedTo ?? old?.observedSourceResourceVersion ?? null;
    const sameSync = old?.state === o.state && old.observedSourceResourceVersion === observed;
    return {
      cluster: o.cluster,
      state: o.state,
      observedSourceResourceVersion: observed,
      lastError: o.lastError,
      lastSyncTime: o.syncedTo !== undefined
        ? (sameSync && old?.lastSyncTime ? old.lastSyncTime : context.now)
        : (old?.lastSyncTime ?? null),
    };
  }).sort((a, b) => a.cluster.localeCompare(b.cluster));
  const synced = targets.filter((t) => t.state === "InSync").length;
  const ready = synced === targets.length;
  const notSynced = targets.filter((t) => t.state !== "InSync").map((t) => `${t.cluster} ${t.state}`);
  const reason = ready ? "AllInSync" : "TargetsNotInSync";
  const message = ready ? `${synced} of ${targets.length} target clusters in sync` : notSynced.join(", ");
  const oldReady = previous?.conditions?.find((c) => c.type === "Ready");
  const status = ready ? "True" : "False";
  return {
    ...(context.generation !== undefined ? { observedGeneration: context.generation } : {}),
    state: "Ok",
    message,
    source: context.source,
    synced: `${synced}/${targets.length}`,
    syncedClusters: synced,
    totalClusters: targets.length,
    targets,
    conditions: [{
      type: "Ready",
      status,
      reason,
      message,
      lastTransitionTime: oldReady?.status === status && oldReady.lastTransitionTime
        ? oldReady.lastTransitionTime
        : context.now,
    }],
  };
}

/**
 * The status of a Mirror the hub refuses to act on (`reason`, e.g. `NamespaceNotAllowed`): `state: Error`, no target
 * rows, Ready False with `message`.
 *
 * Guarantees: like `nextStatus`, the same refusal gives a status equal to `previous` (no write, no new Event).
 */
export function refusedStatus(
  previous: Partial<MirrorStatus> | undefined,
  reason: string,
  message: string,
  context: { generation?: number; source: string; now: string },
): MirrorStatus {
  const oldReady = previous?.conditions?.find((c) => c.type === "Ready");
  return {
    ...(context.generation !== undefined ? { observedGeneration: context.generation } : {}),
    state: "Error",
    message,
    source: context.source,
    synced: "0/0",
    syncedClusters: 0,
    totalClusters: 0,
    targets: [],
    conditions: [{
      type: "Ready",
      status: "False",
      reason,
      message,
      lastTransitionTime: oldReady?.status === "False" && oldReady.lastTransitionTime
        ? oldReady.lastTransitionTime
        : context.now,
    }],
  };
}

/** Whether two statuses are equal field by field (the write is skipped when they are). */
export function sameStatus(a: unknown, b: unknown): boolean {
  return canonical(a) === canonical(b);
}

function canonical(v: unknown): string {
  return JSON.stringify(
    v,
    (_k, x) =>
      x && typeof x === "object" && !Array.isArray(x)
        ? Object.fromEntries(Object.entries(x).sort(([a], [b]) => a.localeCompare(b)))
        : x,
  );
}

// Health states: the one list of states a cluster, or one operator in it, can be in, and how they rank.

import type { FailureState } from "../kube/mod.ts";

/**
 * A health state, as `/status` shows it for a cluster and for each operator in it.
 *
 * @example
 * ```ts
 * import type { HealthState, Hub } from "../../hub.ts";
 * declare const hub: Hub;
 * for (const [name, cluster] of Object.entries(hub.health().clusters)) {
 *   const state: HealthState = cluster.state;
 *   if (state === "forbidden" || state === "missing-crd") console.log(`${name}: ${state}: check RBAC and CRDs`);
 * }
 * ```
 */
export type HealthState = "watching" | "syncing" | "connecting" | "registering" | FailureState;

/**
 * Every health state, from best to worst. `registering` is a cluster a provider found but has not engaged yet.
 * `too-large` is a watch whose server sent a list page of one object or a watch event over `--max-object-bytes`: like
 * `missing-crd` and `forbidden` it concerns one resource, so it ranks beside them, below failures of the whole cluster.
 */
export const HEALTH_STATES: readonly HealthState[] = [
  "watching",
  "syncing",
  "connecting",
  "registering",
  "missing-crd",
  "too-large",
  "forbidden",
  "unauthorized",
  "unreachable",
];

/** Where one watcher stands: a health state other than `registering`. */
export type WatchPhase = Exclude<HealthState, "registering">;

/** The worst of `states` (a cluster's state is the worst of its operators'); `connecting` when there are none. */
export function worstState(states: Iterable<HealthState>): HealthState {
  let worst: HealthState | undefined;
  for (const s of states) {
    if (worst === undefined || HEALTH_STATES.indexOf(s) > HEALTH_STATES.indexOf(worst)) worst = s;
  }
  return worst ?? "connecting";
}

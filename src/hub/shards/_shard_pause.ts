// The shard layer's pause (`--shard-warm`): clusters watched but not reconciled, their running reconciles cancelled.

import type { ReconcileTarget } from "../../runtime/mod.ts";

/**
 * Which clusters are paused, and one cancel signal per engaged cluster that a pause fires.
 *
 * Guarantees: until `pause` is first called, `bind` hands targets back untouched (no per-reconcile cost for hubs
 * that never pause); afterwards every bound reconcile's requests are aborted by its cluster's next pause or its
 * disengage, and a reconcile bound after a pause gets a fresh signal.
 */
export class ShardPause {
  readonly #paused = new Set<string>();
  /** Set once `pause` was ever called: reconciles are then bound to their cluster's pause signal. */
  #pausable = false;
  /** Per engaged cluster: aborted by `pause` (then replaced) and by `disengaged`. */
  readonly #signals = new Map<string, AbortController>();

  /** Whether `cluster` is paused now. */
  has(cluster: string): boolean {
    return this.#paused.has(cluster);
  }

  /** Pauses `cluster` (engaged or not yet) and cancels the reconciles running there. */
  pause(cluster: string): void {
    this.#pausable = true;
    this.#paused.add(cluster);
    const c = this.#signals.get(cluster);
    if (!c) return;
    c.abort();
    this.#signals.set(cluster, new AbortController());
  }

  /** Ends the pause; false when `cluster` was not paused. */
  resume(cluster: string): boolean {
    return this.#paused.delete(cluster);
  }

  /** `cluster` was engaged: its reconciles get a fresh signal. */
  engaged(cluster: string): void {
    this.#signals.set(cluster, new AbortController());
  }

  /** `cluster` was disengaged: the reconciles still running there are cancelled. */
  disengaged(cluster: string): void {
    this.#signals.get(cluster)?.abort();
    this.#signals.delete(cluster);
  }

  /** `t` with its client and cross-cluster connections bound to `cluster`'s pause signal (once pausing is in use). */
  bind(cluster: string, t: ReconcileTarget | undefined): ReconcileTarget | undefined {
    const paused = this.#signals.get(cluster)?.signal;
    if (!t || !this.#pausable || !paused) return t;
    return {
      reconciler: t.reconciler,
      events: t.events,
      client: { withSignal: (s: AbortSignal) => t.client.withSignal(AbortSignal.any([s, paused])) } as typeof t.client,
      cluster: (other, s) => t.cluster(other, AbortSignal.any([s, paused])),
      clusters: t.clusters ? () => t.clusters!() : undefined,
      background: t.background,
    };
  }
}

// The shared queue's per cluster × operator accounting: workqueue_* metrics and the depths health reports.

import type { WorkQueueHooks } from "../queue/mod.ts";
import type { HubMetrics } from "./metrics.ts";

/** One cluster × operator's queue labels and depth. */
interface Series {
  readonly cluster: string;
  readonly operator: string;
  depth: number;
}

/**
 * Keys queued (added minus handed out) per `cluster/operator` key prefix, kept in step with the workqueue metrics.
 *
 * Assumptions: queue keys are `cluster/operator/namespace/name` (see src/queue/key.ts); only the cluster name may
 * hold a "/", so the prefix ends at the second "/" from the right.
 */
export class QueueSeries {
  readonly #metrics: HubMetrics;
  /** Per `cluster/operator` key prefix. */
  readonly #series = new Map<string, Series>();
  /** The shared queue's hooks: adds, depth, time queued and retries, per cluster and operator. */
  readonly hooks: Required<WorkQueueHooks>;

  constructor(metrics: HubMetrics) {
    this.#metrics = metrics;
    const m = metrics;
    this.hooks = {
      added: (key) => {
        const s = this.#seriesOf(key);
        m.adds.inc(s.operator, s.cluster);
        m.depth.set(++s.depth, s.operator, s.cluster);
      },
      handedOut: (key, waitedMs) => {
        const s = this.#seriesOf(key);
        m.queueDuration.observe(waitedMs / 1000, s.operator, s.cluster);
        m.depth.set(s.depth = Math.max(0, s.depth - 1), s.operator, s.cluster);
      },
      retried: (key) => {
        const s = this.#seriesOf(key);
        m.retries.inc(s.operator, s.cluster);
      },
    };
  }

  /** Keys of `operator` queued in `cluster` now. */
  depth(cluster: string, operator: string): number {
    return this.#series.get(`${cluster}/${operator}`)?.depth ?? 0;
  }

  /** Zeroes a cluster's depths (its queued keys were dropped). */
  zero(cluster: string): void {
    for (const s of this.#series.values()) {
      if (s.cluster === cluster && s.depth > 0) this.#metrics.depth.set(s.depth = 0, s.operator, s.cluster);
    }
  }

  /** Forgets a disengaged cluster's entries: a hub that sees many names come and go keeps none per name ever seen. */
  forget(cluster: string): void {
    for (const [prefix, s] of this.#series) if (s.cluster === cluster) this.#series.delete(prefix);
  }

  /** The labels and depth of a queue key's cluster and operator; one Map lookup on the hot path. */
  #seriesOf(key: string): Series {
    const b = key.lastIndexOf("/", key.lastIndexOf("/") - 1);
    const prefix = key.slice(0, b);
    let s = this.#series.get(prefix);
    if (!s) {
      const a = prefix.lastIndexOf("/");
      s = { cluster: key.slice(0, a), operator: key.slice(a + 1, b), depth: 0 };
      this.#series.set(prefix, s);
    }
    return s;
  }
}

// The shared queue's per cluster × operator accounting: workqueue_* metrics and the depths health reports.

import type { QueueKey, WorkQueueHooks } from "../../queue/mod.ts";
import type { HubMetrics } from "./metrics.ts";

/** One cluster × operator's queue labels and depth. */
interface Series {
  readonly cluster: string;
  readonly operator: string;
  depth: number;
}

/** Keys queued (added minus handed out) per cluster and operator, kept in step with the workqueue metrics. */
export class QueueSeries {
  readonly #metrics: HubMetrics;
  /** Per cluster, per operator. */
  readonly #series = new Map<string, Map<string, Series>>();
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
    return this.#series.get(cluster)?.get(operator)?.depth ?? 0;
  }

  /** Zeroes a cluster's depths (its queued keys were dropped). */
  zero(cluster: string): void {
    for (const s of this.#series.get(cluster)?.values() ?? []) {
      if (s.depth > 0) this.#metrics.depth.set(s.depth = 0, s.operator, s.cluster);
    }
  }

  /** Forgets a disengaged cluster's entries: a hub that sees many names come and go keeps none per name ever seen. */
  forget(cluster: string): void {
    this.#series.delete(cluster);
  }

  /** The labels and depth of a queue key's cluster and operator; two Map lookups on the hot path. */
  #seriesOf(key: QueueKey): Series {
    const { operator, request: { cluster } } = key;
    let byOperator = this.#series.get(cluster);
    if (!byOperator) this.#series.set(cluster, byOperator = new Map());
    let s = byOperator.get(operator);
    if (!s) byOperator.set(operator, s = { cluster, operator, depth: 0 });
    return s;
  }
}

// Reconciles per second per cluster over the last 10 minutes, sampled from the reconcile counters, bounded in memory.

import type * as prom from "../../util/prometheus.ts";
import { type Clock, type Logger, SystemClock } from "../../util/mod.ts";
import { CounterSeries } from "./metric_series.ts";

/** What /status adds for the status page's sparklines: one rate per step, oldest first, the newest last. */
export interface ReconcileHistorySnapshot {
  stepSeconds: number;
  clusters: Record<string, number[]>;
}

export interface ReconcileHistoryOptions {
  /** Each cluster's reconcile count so far (all operators, all results). */
  read(): Promise<Map<string, number>>;
  /**
   * The clusters to keep a line for, when given: one absent from `read()` counts 0, and `read()`'s other names are
   * ignored. Without it, `read()`'s names are the clusters.
   */
  clusters?(): readonly string[];
  /** Default 5 s. */
  stepMs?: number;
  /** Default 10 minutes. */
  windowMs?: number;
  clock?: Clock;
  logger?: Logger;
}

interface Series {
  /** The ring; undefined while every rate recorded is 0 (an idle cluster holds no array). */
  rates: Float64Array | undefined;
  /** Rates recorded so far, up to the ring's length. */
  count: number;
  /** Index of the next write. */
  head: number;
  lastTotal: number;
  /** The sample that last saw the cluster. */
  seen: number;
}

/**
 * Keeps a ring of reconcile rates per cluster.
 *
 * Why sample the counters instead of hooking into the controller: the reconcile path stays as it is (no extra work
 * per reconcile), and the history sees exactly what /metrics exports.
 *
 * Guarantees: memory is at most `windowMs / stepMs` numbers per cluster, and none for a cluster whose every rate so
 * far is 0 (most of a many-cluster hub's); a cluster missing from a sample is forgotten; a counter that went down (the
 * cluster was re-engaged) counts from zero, as Prometheus' rate() does.
 */
export class ReconcileHistory {
  readonly #o: ReconcileHistoryOptions;
  readonly #clock: Clock;
  readonly #stepMs: number;
  readonly #slots: number;
  readonly #series = new Map<string, Series>();
  #lastAt: number | undefined;
  #sampleNo = 0;

  constructor(options: ReconcileHistoryOptions) {
    this.#o = options;
    this.#clock = options.clock ?? new SystemClock();
    this.#stepMs = options.stepMs ?? 5_000;
    this.#slots = Math.max(1, Math.round((options.windowMs ?? 600_000) / this.#stepMs));
  }

  /** Samples every step until `signal` aborts. */
  async start(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      try {
        await this.sample();
      } catch (err) {
        this.#o.logger?.warn("cannot sample the reconcile counters", { error: err });
      }
      await this.#clock.sleep(this.#stepMs, signal);
    }
  }

  /** Takes one sample now: the first one only records the totals. */
  async sample(): Promise<void> {
    const totals = await this.#o.read();
    const now = this.#clock.now();
    const seconds = this.#lastAt === undefined ? 0 : (now - this.#lastAt) / 1000;
    this.#lastAt = now;
    const no = ++this.#sampleNo;
    // An index loop and forEach, not for-of: this cold code runs every 5 s over thousands of mostly idle clusters,
    // unoptimised, where each for-of step allocates; here nothing is allocated per cluster.
    const names = this.#o.clusters?.();
    if (names) {
      for (let i = 0; i < names.length; i++) this.#record(names[i], totals.get(names[i]) ?? 0, seconds, no);
    } else totals.forEach((total, name) => this.#record(name, total, seconds, no));
    this.#series.forEach((s, name, series) => {
      if (s.seen !== no) series.delete(name);
    });
  }

  #record(name: string, total: number, seconds: number, no: number): void {
    const s = this.#series.get(name);
    if (!s) {
      this.#series.set(name, { rates: undefined, count: 0, head: 0, lastTotal: total, seen: no });
      return;
    }
    s.seen = no;
    const delta = total >= s.lastTotal ? total - s.lastTotal : total;
    s.lastTotal = total;
    if (seconds <= 0) return;
    // The ring's slots not written yet read 0, as the idle steps recorded before it existed were.
    if (delta > 0) s.rates ??= new Float64Array(this.#slots);
    if (s.rates) s.rates[s.head] = delta / seconds;
    s.head = (s.head + 1) % this.#slots;
    s.count = Math.min(s.count + 1, this.#slots);
  }

  snapshot(): ReconcileHistorySnapshot {
    const clusters: Record<string, number[]> = {};
    for (const [name, s] of this.#series) {
      const out: number[] = [];
      for (let i = s.count; i > 0; i--) {
        out.push(s.rates ? Math.round(s.rates[(s.head - i + this.#slots) % this.#slots] * 1000) / 1000 : 0);
      }
      clusters[name] = out;
    }
    return { stepSeconds: this.#stepMs / 1000, clusters };
  }
}

/**
 * Reads `controller_runtime_reconcile_total` from a registry, summed per cluster: with `clusters`, every name in it is
 * present (0 before its first reconcile) and no other; without, the clusters that have a count.
 */
export async function reconcileTotals(
  registry: prom.MetricRegistry,
  clusters?: string[],
): Promise<Map<string, number>> {
  const totals = new Map<string, number>();
  if (clusters) { for (let i = 0; i < clusters.length; i++) totals.set(clusters[i], 0); }
  const metric = registry.getSingleMetric("controller_runtime_reconcile_total");
  if (!metric) return totals;
  // The hub's own counter is summed as kept: rendering it would fold clusters, reading every cluster's health.
  if (metric instanceof CounterSeries) {
    metric.sumsBy("cluster").forEach((total, cluster) => {
      if (!clusters || totals.has(cluster)) totals.set(cluster, (totals.get(cluster) ?? 0) + total);
    });
    return totals;
  }
  const values = (await metric.get()).values;
  for (let i = 0; i < values.length; i++) {
    const cluster = values[i].labels.cluster;
    if (typeof cluster === "string" && (!clusters || totals.has(cluster))) {
      totals.set(cluster, (totals.get(cluster) ?? 0) + values[i].value);
    }
  }
  return totals;
}

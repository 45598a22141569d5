// Reconciles per second per cluster over the last 10 minutes, sampled from the reconcile counters, bounded in memory.

import type client from "prom-client";
import { type Clock, type Logger, SystemClock } from "../util/mod.ts";

/** What /status adds for the status page's sparklines: one rate per step, oldest first, the newest last. */
export interface ReconcileHistorySnapshot {
  stepSeconds: number;
  clusters: Record<string, number[]>;
}

export interface ReconcileHistoryOptions {
  /** Each cluster's reconcile count so far (all operators, all results). */
  read(): Promise<Map<string, number>>;
  /** Default 5 s. */
  stepMs?: number;
  /** Default 10 minutes. */
  windowMs?: number;
  clock?: Clock;
  logger?: Logger;
}

interface Series {
  rates: Float64Array;
  /** Rates recorded so far, up to rates.length. */
  count: number;
  /** Index of the next write. */
  head: number;
  lastTotal: number;
}

/**
 * Keeps a ring of reconcile rates per cluster.
 *
 * Why sample the counters instead of hooking into the controller: the reconcile path stays as it is (no extra work
 * per reconcile), and the history sees exactly what /metrics exports.
 *
 * Guarantees: memory is `windowMs / stepMs` numbers per cluster; a cluster missing from a sample is forgotten; a
 * counter that went down (the cluster was re-engaged) counts from zero, as Prometheus' rate() does.
 */
export class ReconcileHistory {
  readonly #o: ReconcileHistoryOptions;
  readonly #clock: Clock;
  readonly #stepMs: number;
  readonly #slots: number;
  readonly #series = new Map<string, Series>();
  #lastAt: number | undefined;

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
    for (const name of this.#series.keys()) if (!totals.has(name)) this.#series.delete(name);
    for (const [name, total] of totals) {
      const s = this.#series.get(name);
      if (!s) {
        this.#series.set(name, { rates: new Float64Array(this.#slots), count: 0, head: 0, lastTotal: total });
        continue;
      }
      const delta = total >= s.lastTotal ? total - s.lastTotal : total;
      s.lastTotal = total;
      if (seconds <= 0) continue;
      s.rates[s.head] = delta / seconds;
      s.head = (s.head + 1) % this.#slots;
      s.count = Math.min(s.count + 1, this.#slots);
    }
  }

  snapshot(): ReconcileHistorySnapshot {
    const clusters: Record<string, number[]> = {};
    for (const [name, s] of this.#series) {
      const out: number[] = [];
      for (let i = s.count; i > 0; i--) {
        out.push(Math.round(s.rates[(s.head - i + this.#slots) % this.#slots] * 1000) / 1000);
      }
      clusters[name] = out;
    }
    return { stepSeconds: this.#stepMs / 1000, clusters };
  }
}

/**
 * Reads `controller_runtime_reconcile_total` from a registry, summed per cluster, with every name in `clusters`
 * present (0 before its first reconcile), so a cluster that never reconciled still gets a flat line.
 */
export async function reconcileTotals(registry: client.Registry, clusters: string[]): Promise<Map<string, number>> {
  const totals = new Map<string, number>(clusters.map((c) => [c, 0]));
  const metric = registry.getSingleMetric("controller_runtime_reconcile_total");
  if (!metric) return totals;
  const values = await metric.get();
  for (const v of values.values) {
    const cluster = v.labels.cluster;
    if (typeof cluster === "string" && totals.has(cluster)) totals.set(cluster, totals.get(cluster)! + v.value);
  }
  return totals;
}

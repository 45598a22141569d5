// Hot-path Prometheus series: plain numbers per label tuple, rendered through the hub's metric registry.
//
// A labelled metric of src/util/prometheus.ts (as prom-client's before it) takes a label object on every inc/observe
// and checks and joins it; at a few thousand reconciles a second that was about 6 % of the hub's CPU (`deno task
// bench`). These classes key a series by its label values in a fixed order, so updating one is a Map lookup and an
// addition. The registry does everything around it: the text format, /metrics.

import {
  type HistogramBuckets,
  histogramSamples,
  type MetricRegistry,
  type MetricValues,
  type Sample,
} from "../../util/prometheus.ts";

const SEP = "\u0000";

/** The parts every series family shares: label names, the series map, removal by label value. */
abstract class Family<S> {
  readonly name: string;
  readonly help: string;
  readonly labelNames: readonly string[];
  protected readonly series: Map<string, { labels: string[]; s: S }> = new Map();
  /** Set by `foldClusters`: the index of the `cluster` label and which values keep series of their own. */
  #fold: { index: number; own: () => (cluster: string) => boolean } | undefined;

  constructor(registry: MetricRegistry, name: string, help: string, labelNames: readonly string[]) {
    this.name = name;
    this.help = help;
    this.labelNames = labelNames;
    registry.registerMetric(this);
  }

  /** Drops every series whose label `label` equals `value` (e.g. a disengaged cluster). */
  removeWhere(label: string, value: string): void {
    const i = this.labelNames.indexOf(label);
    if (i < 0) return;
    for (const [key, { labels }] of this.series) {
      if (labels[i] === value) this.series.delete(key);
    }
  }

  /**
   * Renders the series of a cluster for which `own()(cluster)` is false folded into one per remaining label tuple,
   * with `cluster=""` (their values summed), so clusters that get no series of their own (see HubMetrics) add none.
   * What is kept per cluster is unchanged (removed as before by `removeWhere`); only the rendering folds.
   */
  foldClusters(own: () => (cluster: string) => boolean): void {
    const index = this.labelNames.indexOf("cluster");
    if (index >= 0) this.#fold = { index, own };
  }

  /** The series to render: each kept as it is, or folded (see `foldClusters`) with `merge`. */
  protected rendering(merge: (into: S | undefined, from: S) => S): Iterable<{ labels: string[]; s: S }> {
    const fold = this.#fold;
    if (!fold) return this.series.values();
    const own = fold.own();
    const out: { labels: string[]; s: S }[] = [];
    const folded = new Map<string, { labels: string[]; s: S }>();
    for (const e of this.series.values()) {
      if (own(e.labels[fold.index])) {
        out.push(e);
        continue;
      }
      const labels = e.labels.map((v, i) => (i === fold.index ? "" : v));
      const key = labels.join(SEP);
      folded.set(key, { labels, s: merge(folded.get(key)?.s, e.s) });
    }
    return [...out, ...folded.values()];
  }

  protected at(values: string[], create: () => S): S {
    if (values.length !== this.labelNames.length) {
      throw new TypeError(`${this.name} takes ${this.labelNames.length} label values, got ${values.length}`);
    }
    const key = values.join(SEP);
    let entry = this.series.get(key);
    if (!entry) {
      entry = { labels: values, s: create() };
      this.series.set(key, entry);
    }
    return entry.s;
  }

  protected labelsOf(values: string[]): Record<string, string> {
    const out: Record<string, string> = {};
    this.labelNames.forEach((n, i) => (out[n] = values[i]));
    return out;
  }

  reset(): void {
    this.series.clear();
  }

  abstract readonly type: MetricValues["type"];

  abstract get(): Promise<MetricValues>;

  protected rendered(values: Sample[]): Promise<MetricValues> {
    return Promise.resolve({ name: this.name, help: this.help, type: this.type, values, aggregator: "sum" });
  }
}

/** Counters and gauges: one number per series. */
abstract class ScalarFamily extends Family<{ v: number }> {
  get(): Promise<MetricValues> {
    const merge = (into: { v: number } | undefined, from: { v: number }) => ({ v: (into?.v ?? 0) + from.v });
    return this.rendered(
      [...this.rendering(merge)].map(({ labels, s }) => ({ labels: this.labelsOf(labels), value: s.v })),
    );
  }
}

/** A counter family: `inc(...labelValues)`. */
export class CounterSeries extends ScalarFamily {
  readonly type = "counter";

  inc(...values: string[]): void {
    this.at(values, () => ({ v: 0 })).v++;
  }

  /** The current value of one series (0 if it never moved). */
  value(...values: string[]): number {
    return this.series.get(values.join(SEP))?.s.v ?? 0;
  }

  /**
   * The series summed by the value of label `label` (e.g. per cluster), as kept: nothing folded, nothing rendered, so
   * reading it costs no scrape (which reads every cluster's health to fold).
   */
  sumsBy(label: string): Map<string, number> {
    const out = new Map<string, number>();
    const i = this.labelNames.indexOf(label);
    if (i < 0) return out;
    this.series.forEach(({ labels, s }) => out.set(labels[i], (out.get(labels[i]) ?? 0) + s.v));
    return out;
  }
}

/** A gauge family: `set(value, ...labelValues)`. */
export class GaugeSeries extends ScalarFamily {
  readonly type = "gauge";

  set(value: number, ...values: string[]): void {
    this.at(values, () => ({ v: 0 })).v = value;
  }
}

/** A histogram family with fixed upper bounds: `observe(value, ...labelValues)`. */
export class HistogramSeries extends Family<HistogramBuckets> {
  readonly type = "histogram";
  readonly #bounds: readonly number[];

  constructor(
    registry: MetricRegistry,
    name: string,
    help: string,
    labelNames: readonly string[],
    bounds: readonly number[],
  ) {
    super(registry, name, help, labelNames);
    if (bounds.some((b, i) => i > 0 && b <= bounds[i - 1])) throw new RangeError(`${name}: buckets must increase`);
    this.#bounds = bounds;
  }

  observe(value: number, ...values: string[]): void {
    const b = this.at(values, () => ({ counts: new Float64Array(this.#bounds.length), sum: 0, count: 0 }));
    b.sum += value;
    b.count++;
    // Non-cumulative here; get() accumulates. Values above the last bound only count in +Inf.
    const bounds = this.#bounds;
    for (let i = 0; i < bounds.length; i++) {
      if (value <= bounds[i]) {
        b.counts[i]++;
        break;
      }
    }
  }

  get(): Promise<MetricValues> {
    const out: Sample[] = [];
    const merge = (into: HistogramBuckets | undefined, from: HistogramBuckets): HistogramBuckets => {
      const counts = new Float64Array(from.counts);
      if (into) counts.forEach((_, i) => (counts[i] += into.counts[i]));
      return { counts, sum: (into?.sum ?? 0) + from.sum, count: (into?.count ?? 0) + from.count };
    };
    for (const { labels, s } of this.rendering(merge)) {
      out.push(...histogramSamples(this.name, this.labelsOf(labels), this.#bounds, s));
    }
    return this.rendered(out);
  }
}

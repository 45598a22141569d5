// Prometheus metrics of the hub's own: a registry, counters, gauges and histograms with labels, and the text format
// (version 0.0.4) that /metrics serves. It replaces prom-client, whose import alone held about 9 MB of the idle hub's
// memory (docs/benchmarks.md, "What loading costs"); the subset here is what the hub uses, with prom-client's names
// and output.
//
// Guarantees:
// - `metrics()` renders every registered metric in registration order: `# HELP`, `# TYPE`, then one line per series,
//   label values escaped (backslash, newline, double quote), values as prom-client writes them (`+Inf`, `-Inf`, `Nan`);
// - a metric's `collect` runs before each rendering of it, with the metric as `this`;
// - a label not among a metric's `labelNames` throws, naming it; a counter never goes down;
// - a metric without labels has its one series from the start (at 0), as in prom-client.

/** The content type of the text format `metrics()` renders. */
export const PROMETHEUS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

/** One rendered sample: `metricName` defaults to the metric's name (histograms name `_bucket`, `_sum`, `_count`). */
export interface Sample {
  metricName?: string;
  labels: Record<string, string | number>;
  value: number;
}

/** What a metric gives the registry to render. */
export interface MetricValues {
  name: string;
  help: string;
  type: "counter" | "gauge" | "histogram";
  values: Sample[];
  aggregator?: string;
}

/** Anything a registry renders: a name and its current values. */
export interface Metric {
  readonly name: string;
  get(): Promise<MetricValues>;
}

/** The metrics of one hub (no process-wide default registry, so hubs in one process never share series). */
export class MetricRegistry {
  readonly contentType: string = PROMETHEUS_CONTENT_TYPE;
  readonly #metrics = new Map<string, Metric>();

  /** Adds `metric`; a different metric of the same name throws. */
  registerMetric(metric: Metric): void {
    const existing = this.#metrics.get(metric.name);
    if (existing && existing !== metric) {
      throw new Error(`A metric with the name ${metric.name} has already been registered.`);
    }
    this.#metrics.set(metric.name, metric);
  }

  /** The metric registered as `name`, if any. */
  getSingleMetric(name: string): Metric | undefined {
    return this.#metrics.get(name);
  }

  /** Drops the metric registered as `name`. */
  removeSingleMetric(name: string): void {
    this.#metrics.delete(name);
  }

  /** Every metric in the text format. */
  async metrics(): Promise<string> {
    const parts: string[] = [];
    for (const metric of this.#metrics.values()) parts.push(render(await metric.get()));
    return `${parts.join("\n\n")}\n`;
  }
}

/** Label values by label name; a label left out is not rendered. */
export type LabelValues<T extends string> = Partial<Record<T, string | number>>;

/** What every metric is made with. `collect` runs before each rendering (to set values read from elsewhere). */
export interface MetricConfiguration<T extends string, M> {
  name: string;
  help: string;
  labelNames?: readonly T[];
  registers?: MetricRegistry[];
  collect?: (this: M) => void | Promise<void>;
}

/** The parts counters, gauges and histograms share: validated labels and one state per label tuple. */
abstract class Labelled<T extends string, S> implements Metric {
  readonly name: string;
  readonly help: string;
  readonly labelNames: readonly T[];
  abstract readonly type: MetricValues["type"];
  protected readonly series: Map<string, { labels: LabelValues<T>; s: S }> = new Map();
  readonly #collect: ((this: unknown) => void | Promise<void>) | undefined;

  constructor(config: MetricConfiguration<T, never>) {
    if (!/^[a-zA-Z_:][a-zA-Z0-9_:]*$/.test(config.name)) throw new Error(`Invalid metric name: ${config.name}`);
    this.name = config.name;
    this.help = config.help;
    this.labelNames = config.labelNames ?? [];
    this.#collect = config.collect as ((this: unknown) => void | Promise<void>) | undefined;
    for (const r of config.registers ?? []) r.registerMetric(this);
  }

  protected abstract fresh(): S;

  /** The state of the series `labels` names, made on first use. */
  protected at(labels: LabelValues<T> | undefined): S {
    const key = this.#key(labels);
    let entry = this.series.get(key);
    if (!entry) {
      entry = { labels: { ...labels } as LabelValues<T>, s: this.fresh() };
      this.series.set(key, entry);
    }
    return entry.s;
  }

  #key(labels: LabelValues<T> | undefined): string {
    if (!labels) return "";
    for (const name in labels) {
      if (!this.labelNames.includes(name)) {
        throw new Error(
          `Added label "${name}" is not included in initial labelset: ${JSON.stringify(this.labelNames)}`,
        );
      }
    }
    let key = "";
    for (const name of this.labelNames) {
      const v = labels[name];
      key += v === undefined ? "\u0001\u0000" : `${v}\u0000`;
    }
    return key;
  }

  /** Drops every series, and starts the one series of a metric without labels again at zero. */
  reset(): void {
    this.series.clear();
    if (this.labelNames.length === 0) this.at(undefined);
  }

  /** Drops the series `labels` names. */
  remove(labels: LabelValues<T>): void {
    this.series.delete(this.#key(labels));
  }

  async get(): Promise<MetricValues> {
    await this.#collect?.call(this);
    return { name: this.name, help: this.help, type: this.type, values: this.samples(), aggregator: "sum" };
  }

  protected abstract samples(): Sample[];

  /** The labels of a series, in `labelNames` order, without those left out. */
  protected ordered(labels: LabelValues<T>): Record<string, string | number> {
    const out: Record<string, string | number> = {};
    for (const name of this.labelNames) {
      const v = labels[name];
      if (v !== undefined) out[name] = v;
    }
    return out;
  }
}

/** Splits the `(labels?, value?)` or `(value?)` arguments of inc, dec, set and observe. */
function args<T extends string>(
  a: LabelValues<T> | number | undefined,
  b: number | undefined,
  fallback: number | undefined,
): [LabelValues<T> | undefined, number] {
  const [labels, value] = typeof a === "object" ? [a, b ?? fallback] : [undefined, a ?? fallback];
  if (typeof value !== "number" || Number.isNaN(value)) throw new TypeError(`Value is not a valid number: ${value}`);
  return [labels, value];
}

abstract class Scalar<T extends string> extends Labelled<T, { v: number }> {
  protected fresh(): { v: number } {
    return { v: 0 };
  }

  protected samples(): Sample[] {
    return [...this.series.values()].map(({ labels, s }) => ({ labels: this.ordered(labels), value: s.v }));
  }
}

/** A count that only goes up: `inc(labels?, by = 1)`. */
export class Counter<T extends string = string> extends Scalar<T> {
  readonly type = "counter";

  constructor(config: MetricConfiguration<T, Counter<T>>) {
    super(config);
    if (this.labelNames.length === 0) this.at(undefined);
  }

  inc(labels?: LabelValues<T> | number, by?: number): void {
    const [l, v] = args(labels, by, 1);
    if (v < 0) throw new Error("It is not possible to decrease a counter");
    if (!Number.isFinite(v)) throw new TypeError(`Value is not a valid number: ${v}`);
    this.at(l).v += v;
  }
}

/** A value that goes up and down: `set(labels?, value)`, `inc`, `dec`. */
export class Gauge<T extends string = string> extends Scalar<T> {
  readonly type = "gauge";

  constructor(config: MetricConfiguration<T, Gauge<T>>) {
    super(config);
    if (this.labelNames.length === 0) this.at(undefined);
  }

  set(labels: LabelValues<T> | number, value?: number): void {
    const [l, v] = args(labels, value, undefined);
    this.at(l).v = v;
  }

  inc(labels?: LabelValues<T> | number, by?: number): void {
    const [l, v] = args(labels, by, 1);
    this.at(l).v += v;
  }

  dec(labels?: LabelValues<T> | number, by?: number): void {
    const [l, v] = args(labels, by, 1);
    this.at(l).v -= v;
  }
}

/** prom-client's default histogram buckets, in seconds. */
const DEFAULT_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** One histogram series: per-bucket (non-cumulative) counts, the sum and the count of its observations. */
export interface HistogramBuckets {
  counts: Float64Array;
  sum: number;
  count: number;
}

/** Observations counted into fixed buckets: `observe(labels?, value)`. */
export class Histogram<T extends string = string> extends Labelled<T, HistogramBuckets> {
  readonly type = "histogram";
  readonly #bounds: readonly number[];

  constructor(config: MetricConfiguration<T, Histogram<T>> & { buckets?: readonly number[] }) {
    super(config);
    const bounds = config.buckets ?? DEFAULT_BUCKETS;
    if (bounds.some((b, i) => i > 0 && b <= bounds[i - 1])) throw new RangeError(`${this.name}: buckets must increase`);
    this.#bounds = bounds;
    if (this.labelNames.length === 0) this.at(undefined);
  }

  protected fresh(): HistogramBuckets {
    return { counts: new Float64Array(this.#bounds.length), sum: 0, count: 0 };
  }

  observe(labels: LabelValues<T> | number, value?: number): void {
    const [l, v] = args(labels, value, undefined);
    const b = this.at(l);
    b.sum += v;
    b.count++;
    // Non-cumulative here; samples() accumulates. Values above the last bound only count in +Inf.
    const i = this.#bounds.findIndex((le) => v <= le);
    if (i >= 0) b.counts[i]++;
  }

  protected samples(): Sample[] {
    return [...this.series.values()].flatMap(({ labels, s }) =>
      histogramSamples(this.name, this.ordered(labels), this.#bounds, s)
    );
  }
}

/** A histogram series as samples: cumulative `_bucket`s up to `+Inf`, then `_sum` and `_count`. */
export function histogramSamples(
  name: string,
  labels: Record<string, string | number>,
  bounds: readonly number[],
  b: HistogramBuckets,
): Sample[] {
  const out: Sample[] = [];
  let acc = 0;
  bounds.forEach((le, i) => {
    acc += b.counts[i];
    out.push({ metricName: `${name}_bucket`, labels: { ...labels, le }, value: acc });
  });
  out.push({ metricName: `${name}_bucket`, labels: { ...labels, le: "+Inf" }, value: b.count });
  out.push({ metricName: `${name}_sum`, labels, value: b.sum });
  out.push({ metricName: `${name}_count`, labels, value: b.count });
  return out;
}

/** One metric in the text format (no trailing newline). */
function render(m: MetricValues): string {
  const lines = [`# HELP ${m.name} ${escape(m.help)}`, `# TYPE ${m.name} ${m.type}`];
  for (const s of m.values) {
    let labels = "";
    for (const name in s.labels) {
      const v = s.labels[name];
      labels += `${labels ? "," : ""}${name}="${typeof v === "string" ? escape(v).replace(/"/g, '\\"') : v}"`;
    }
    lines.push(`${s.metricName ?? m.name}${labels ? `{${labels}}` : ""} ${valueText(s.value)}`);
  }
  return lines.join("\n");
}

function escape(text: string): string {
  return text.replace(/\\/g, "\\\\").replace(/\n/g, "\\n");
}

function valueText(v: number): string {
  if (Number.isNaN(v)) return "Nan";
  if (!Number.isFinite(v)) return v < 0 ? "-Inf" : "+Inf";
  return `${v}`;
}

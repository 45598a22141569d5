// A hub's /metrics as the tests read it: Prometheus text parsed into labelled samples, summed by name and labels.
// deno-lint-ignore-file no-explicit-any -- the parser's output is untyped; every field used is converted here.

import parsePrometheusTextFormat from "parse-prometheus-text-format";

/** One sample of a metric family: its labels and value. */
export interface Sample {
  labels: Record<string, string>;
  value: number;
}

/**
 * Parses Prometheus text exposition with parse-prometheus-text-format (npm). That parser merges labelled
 * histograms into one unlabelled sample, so histogram families are parsed as untyped series
 * (`x_bucket`, `x_sum`, `x_count`), which keeps every label. Throws on a malformed line.
 */
export function parseMetrics(text: string): Map<string, Sample[]> {
  const histograms = new Set<string>();
  const untyped = text.split("\n").filter((line) => {
    const m = line.match(/^# TYPE (\S+) histogram$/);
    if (m) histograms.add(m[1]);
    return !m;
  }).join("\n");
  const out = new Map<string, Sample[]>();
  for (const family of parsePrometheusTextFormat(untyped) as any[]) {
    const samples: Sample[] = (family.metrics as any[]).map((m) => ({
      labels: m.labels ?? {},
      value: Number(m.value),
    }));
    out.set(family.name, [...(out.get(family.name) ?? []), ...samples]);
  }
  for (const h of histograms) {
    if (!out.has(`${h}_count`) && text.includes(`${h}_count`)) throw new Error(`histogram ${h} lost in parsing`);
  }
  return out;
}

/**
 * Like {@linkcode metricSum}, but a series that is not there fails: at least one sample of `name` must carry
 * `labels` (a missing series would otherwise sum to 0 and pass a check of "0" or "small").
 */
export function metricSeries(
  metrics: Map<string, Sample[]>,
  name: string,
  labels: Record<string, string> = {},
): number {
  const found = (metrics.get(name) ?? []).filter((s) => Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  if (found.length === 0) throw new Error(`no ${name} series with ${JSON.stringify(labels)} in /metrics`);
  return found.reduce((n, s) => n + s.value, 0);
}

/** Sum of the samples of `name` whose labels include `labels` (0 when there is no such series). */
export function metricSum(metrics: Map<string, Sample[]>, name: string, labels: Record<string, string> = {}): number {
  return (metrics.get(name) ?? [])
    .filter((s) => Object.entries(labels).every(([k, v]) => s.labels[k] === v))
    .reduce((n, s) => n + s.value, 0);
}

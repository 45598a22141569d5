// Reads the Grafana dashboard's PromQL with Prometheus' own grammar (@prometheus-io/lezer-promql): its queries, the
// metric names and label names they use, and the names a /metrics text exposes.
// deno-lint-ignore-file no-explicit-any -- the dashboard is Grafana's free-form JSON.

import { parser } from "@prometheus-io/lezer-promql";

/** One PromQL query of the dashboard and where it sits. */
export interface DashboardQuery {
  /** Panel title (or `variable <name>`) and refId. */
  where: string;
  expr: string;
}

/** What one query uses. */
export interface QueryNames {
  metrics: string[];
  labels: string[];
}

/** A query is not valid PromQL once Grafana's variables are filled in. */
export class PromqlSyntaxError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "PromqlSyntaxError";
  }
}

/** Every panel query (rows' nested panels included) and every query variable, as `label_values(metric, label)`. */
export function dashboardQueries(dashboard: any): DashboardQuery[] {
  const out: DashboardQuery[] = [];
  const walk = (panels: any[]) => {
    for (const p of panels ?? []) {
      for (const t of p.targets ?? []) {
        if (typeof t.expr === "string") out.push({ where: `${p.title} ${t.refId}`, expr: t.expr });
      }
      walk(p.panels);
    }
  };
  walk(dashboard.panels);
  for (const v of dashboard.templating?.list ?? []) {
    if (v.type !== "query") continue;
    const q = typeof v.query === "string" ? v.query : v.query?.query;
    const m = /^label_values\(\s*(.+?)\s*,\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*\)$/.exec(q ?? "");
    if (!m) throw new PromqlSyntaxError(`variable ${v.name}: expected label_values(metric, label), got ${q}`);
    // As a query: the selector, grouped by the label it reads values of.
    out.push({ where: `variable ${v.name}`, expr: `count by (${m[2]}) (${m[1]})` });
  }
  return out;
}

/** Grafana's built-in interval variables and the dashboard's own `$name` ones, replaced by valid PromQL values. */
export function fillVariables(expr: string): string {
  return expr
    .replace(/\$__(rate_interval|interval|range)\b/g, "5m")
    .replace(/\$\{?[A-Za-z_][A-Za-z0-9_]*\}?/g, ".*");
}

/** Metric names (vector selectors) and label names (matchers, by/without, on/ignoring) of one query. */
export function queryNames(expr: string): QueryNames {
  const text = fillVariables(expr);
  const tree = parser.parse(text);
  const metrics = new Set<string>();
  const labels = new Set<string>();
  let error: number | undefined;
  tree.iterate({
    enter: (node) => {
      if (node.type.isError) error ??= node.from;
      if (node.name === "Identifier" && node.node.parent?.name === "VectorSelector") {
        metrics.add(text.slice(node.from, node.to));
      }
      if (node.name === "LabelName") labels.add(text.slice(node.from, node.to));
    },
  });
  if (error !== undefined) {
    throw new PromqlSyntaxError(`not valid PromQL at offset ${error}: ${JSON.stringify(text)}`);
  }
  return { metrics: [...metrics].sort(), labels: [...labels].sort() };
}

/** What a /metrics text exposes: family names from `# TYPE` lines (with their type) and every sample's labels. */
export function exposedNames(
  text: string,
): { families: Map<string, string>; samples: Set<string>; labels: Set<string> } {
  const families = new Map<string, string>();
  const samples = new Set<string>();
  const labels = new Set<string>();
  for (const line of text.split("\n")) {
    const type = /^# TYPE (\S+) (\S+)$/.exec(line);
    if (type) families.set(type[1], type[2]);
    if (line === "" || line.startsWith("#")) continue;
    const sample = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{([^}]*)\})?\s/.exec(line);
    if (!sample) continue;
    samples.add(sample[1]);
    for (const m of (sample[3] ?? "").matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="/g)) labels.add(m[1]);
  }
  return { families, samples, labels };
}

/**
 * True when `name` is exported: a family of that name, or a histogram's `_bucket`, `_sum` or `_count` series.
 * Histograms' bucket series carry the `le` label.
 */
export function isExported(name: string, families: Map<string, string>): boolean {
  if (families.has(name) && families.get(name) !== "histogram") return true;
  const m = /^(.*)_(bucket|sum|count)$/.exec(name);
  return m !== null && families.get(m[1]) === "histogram";
}

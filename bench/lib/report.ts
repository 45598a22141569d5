// The bench's report: Markdown rows, JSON summaries, and what each figure includes (bench/last.json's `figures`).

import type { BenchCluster } from "./cluster.ts";
import type { Shape } from "./run.ts";
import { round, summarize, type Summary } from "./stats.ts";

export interface Row {
  key: string;
  label: string;
  s: Summary;
  unit: string;
  target?: string;
  met?: boolean;
  digits?: number;
}

export function markdown(rows: Row[]): string {
  const lines = [
    "| figure | median | min | max | target | |",
    "|---|---:|---:|---:|---|---|",
  ];
  for (const r of rows) {
    const d = r.digits ?? 2;
    const v = (x: number) => Number.isFinite(x) ? `${round(x, d)}` : "n/a";
    const mark = r.met === undefined ? "" : r.met ? "met" : "**missed**";
    lines.push(
      `| ${r.label} | ${v(r.s.median)} ${r.unit} | ${v(r.s.min)} | ${v(r.s.max)} | ${r.target ?? ""} | ${mark} |`,
    );
  }
  return lines.join("\n");
}

export function json(s: Summary, digits = 3) {
  return {
    median: round(s.median, digits),
    min: round(s.min, digits),
    max: round(s.max, digits),
    samples: s.samples.map((v) => round(v, digits)),
  };
}

/** What one figure includes, recorded beside it in bench/last.json. */
export interface FigureInfo {
  objects_per_cluster: number;
  creation: string;
  crd_shape: Shape;
  startup_in_window: boolean;
  ceiling_concurrency_won: number[] | null;
  load_average_1m: { median: number; min: number; max: number } | null;
}

const CREATION: Record<string, string> = {
  plain: "minimal POST by the bench",
  kubectl: "POST exactly as kubectl apply sends it (last-applied annotation, kubectl-client-side-apply manager)",
  "kubectl apply": "real kubectl apply -f (one List per cluster), operator stopped",
};

export function figure(o: {
  objects: number;
  creation: "plain" | "kubectl" | "kubectl apply";
  shape: Shape;
  startup: boolean;
  ceiling?: number[];
  runs: { load1: number }[];
}): FigureInfo {
  const load = summarize(o.runs.map((r) => r.load1));
  return {
    objects_per_cluster: o.objects,
    creation: CREATION[o.creation],
    crd_shape: o.shape,
    startup_in_window: o.startup,
    ceiling_concurrency_won: o.ceiling ?? null,
    load_average_1m: o.runs.length
      ? { median: round(load.median, 2), min: round(load.min, 2), max: round(load.max, 2) }
      : null,
  };
}

/** The shape the clusters serve now (the first cluster's; setShape keeps them all alike). */
export function shapeOf(cl: BenchCluster[]): Shape {
  return cl[0].statusSubresource ? "status" : "seed";
}

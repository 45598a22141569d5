// The throughput phase: M objects per cluster created at once, the hub against the ceiling (best of the concurrency
// levels) and the ceiling with one more watch stream, rotating which goes first; its rows, keys and chart.

import type { machine } from "../lib/proc.ts";
import { figure, json, shapeOf } from "../lib/report.ts";
import { log } from "../lib/run.ts";
import { round, summarize } from "../lib/stats.ts";
import { lineChart } from "../lib/svg.ts";
import { bestCeiling, type RunKind, steadyRun, type ThroughputRun } from "../lib/throughput_run.ts";
import type { PhaseContext } from "./user_phases.ts";

/** The machine the run is on. */
type Host = ReturnType<typeof machine>;

/**
 * Runs the phase; adds `ratio_to_ceiling`, `hub_cpu_ms_per_reconcile`, `writes_per_object`, `peak_rss_mb` and the
 * other throughput keys to `ctx.out`, and returns the SVG chart of the median repetition.
 */
export async function throughputPhase(ctx: PhaseContext, host: Host, startedAt: string): Promise<string> {
  const { cfg, names, cl, disturbed, rows, out, figures } = ctx;
  const hubRuns: ThroughputRun[] = [];
  const ceilRuns: ThroughputRun[] = [];
  const watchRuns: ThroughputRun[] = [];
  const ceilingWon: number[] = [];
  const ceilingLevels: { concurrency: number; objectsPerSecond: number }[][] = [];
  const orders: RunKind[][] = [
    ["ceiling", "hub", "ceiling+watch"],
    ["hub", "ceiling+watch", "ceiling"],
    ["ceiling+watch", "ceiling", "hub"],
  ];
  for (let r = 0; r < cfg.reps; r++) {
    for (const kind of orders[r % orders.length]) {
      let run: ThroughputRun;
      if (kind === "ceiling") {
        const c = await bestCeiling(cfg, names, cl, {}, "throughput", disturbed);
        run = c.best;
        ceilingWon.push(c.best.concurrency);
        ceilingLevels.push(c.levels);
      } else {
        run = await steadyRun(kind, cfg, names, cl, {}, "throughput", disturbed);
      }
      (kind === "hub" ? hubRuns : kind === "ceiling" ? ceilRuns : watchRuns).push(run);
      log(
        `throughput rep ${r + 1} ${kind}: ${round(run.objectsPerSecond, 0)} obj/s, p50 ${
          round(run.latencyMs.p50, 0)
        } ms, writes/obj ${round(run.writesPerObject, 3)}, ${round(run.seconds, 1)} s, machine busy ${
          round(run.machineBusyPct, 0)
        }% (other ${round(run.otherCpuPct, 0)}%)` +
          (run.hubCpuMsPerReconcile !== undefined
            ? `, hub ${
              round(run.hubCpuMsPerReconcile, 3)
            } ms CPU/reconcile, ${run.hubReconciles} reconciles, ${run.hubPatches} PATCH, ${run.hubReconnects} reconnects, apiservers ${
              round(run.infraCpuMsPerObject, 2)
            } ms CPU/object`
            : "") +
          (run.missing ? `, ${run.missing} MISSING` : ""),
      );
    }
  }
  const S = (f: (r: ThroughputRun) => number, runs = hubRuns) => summarize(runs.map(f));
  const ratio = summarize(hubRuns.map((h, i) => h.objectsPerSecond / ceilRuns[i].objectsPerSecond));
  const ratioWatch = summarize(hubRuns.map((h, i) => h.objectsPerSecond / watchRuns[i].objectsPerSecond));
  const hubOps = S((r) => r.objectsPerSecond);
  const ceilOps = S((r) => r.objectsPerSecond, ceilRuns);
  const cpuRec = S((r) => r.hubCpuMsPerReconcile!);
  const writes = S((r) => r.writesPerObject);
  const peak = S((r) => r.hubPeakRssMb!);
  rows.push(
    { key: "objects_per_second", label: "objects_per_second (hub)", s: hubOps, unit: "/s", digits: 0 },
    { key: "ceiling_objects_per_second", label: "ceiling_objects_per_second", s: ceilOps, unit: "/s", digits: 0 },
    {
      key: "ratio_to_ceiling",
      label: "ratio_to_ceiling",
      s: ratio,
      unit: "",
      target: "≥ 0.8",
      met: ratio.median >= 0.8,
    },
    {
      key: "ceiling_with_watch",
      label: "ceiling with one more watch stream (what an operator's watch costs the apiservers)",
      s: S((r) => r.objectsPerSecond, watchRuns),
      unit: "/s",
      digits: 0,
    },
    {
      key: "ratio_to_ceiling_with_watch",
      label: "ratio to the ceiling with watch",
      s: ratioWatch,
      unit: "",
      digits: 2,
    },
    {
      key: "latency_p50",
      label: "latency_ms p50 (under load)",
      s: S((r) => r.latencyMs.p50),
      unit: "ms",
      digits: 0,
    },
    {
      key: "latency_p95",
      label: "latency_ms p95 (under load)",
      s: S((r) => r.latencyMs.p95),
      unit: "ms",
      digits: 0,
    },
    {
      key: "latency_p99",
      label: "latency_ms p99 (under load)",
      s: S((r) => r.latencyMs.p99),
      unit: "ms",
      digits: 0,
    },
    {
      key: "hub_cpu_ms_per_reconcile",
      label: "hub_cpu_ms_per_reconcile",
      s: cpuRec,
      unit: "ms",
      target: "≤ 0.3",
      met: cpuRec.median <= 0.3,
      digits: 3,
    },
    {
      key: "hub_cpu_ms_per_object",
      label: "hub_cpu_ms_per_object",
      s: S((r) => r.hubCpuMsPerObject!),
      unit: "ms",
      digits: 3,
    },
    {
      key: "reconciles_per_object",
      label: "reconciles_per_object",
      s: S((r) => r.hubReconciles! / r.objects),
      unit: "",
      digits: 2,
    },
    {
      key: "writes_per_object",
      label: "writes_per_object (apiserver)",
      s: writes,
      unit: "",
      target: "1.00",
      met: Math.abs(writes.median - 1) < 0.005,
      digits: 3,
    },
    { key: "peak_rss_mb", label: "peak_rss_mb", s: peak, unit: "MB", digits: 1 },
    {
      key: "minimal_client_cpu_ms_per_write",
      label: "minimal Deno client CPU per status write (ceiling − hub run, bench process)",
      s: summarize(ceilRuns.map((c, i) => c.benchCpuMsPerObject - hubRuns[i].benchCpuMsPerObject)),
      unit: "ms",
      digits: 3,
    },
    {
      key: "apiserver_cpu_ms_per_object",
      label: "apiservers+etcd CPU per object (ceiling / hub)",
      s: summarize(ceilRuns.map((c, i) => c.infraCpuMsPerObject / hubRuns[i].infraCpuMsPerObject)),
      unit: "ratio",
      digits: 2,
    },
  );
  out.objects_per_second = json(hubOps, 1);
  out.ceiling_objects_per_second = json(ceilOps, 1);
  out.ratio_to_ceiling = json(ratio);
  out.ceiling_concurrency_won = ceilingWon;
  out.ceiling_levels = ceilingLevels;
  figures.ratio_to_ceiling = figure({
    objects: cfg.objects,
    creation: "plain",
    shape: shapeOf(cl),
    startup: false,
    ceiling: ceilingWon,
    runs: [...hubRuns, ...ceilRuns],
  });
  figures.hub_cpu_ms_per_reconcile = figures.ratio_to_ceiling;
  out.ceiling_with_watch_objects_per_second = json(S((r) => r.objectsPerSecond, watchRuns), 1);
  out.ratio_to_ceiling_with_watch = json(ratioWatch);
  out.latency_ms = {
    p50: json(S((r) => r.latencyMs.p50), 1),
    p95: json(S((r) => r.latencyMs.p95), 1),
    p99: json(S((r) => r.latencyMs.p99), 1),
  };
  out.hub_cpu_ms_per_reconcile = json(cpuRec, 4);
  out.hub_cpu_ms_per_object = json(S((r) => r.hubCpuMsPerObject!), 4);
  out.writes_per_object = json(writes, 4);
  out.peak_rss_mb = json(peak, 1);
  const strip = (r: ThroughputRun) => ({ ...r, series: undefined });
  out.throughput_runs = {
    hub: hubRuns.map(strip),
    ceiling: ceilRuns.map(strip),
    ceiling_with_watch: watchRuns.map(strip),
  };
  // Chart: the repetition whose hub figure is the median, with its paired ceiling run.
  const order = hubRuns.map((r, i) => [r.objectsPerSecond, i] as const).sort((a, b) => a[0] - b[0]);
  const mid = order[order.length >> 1][1];
  const svg = lineChart(
    `Objects to status Ok: hub ${round(hubRuns[mid].objectsPerSecond, 0)}/s vs ceiling ${
      round(ceilRuns[mid].objectsPerSecond, 0)
    }/s (${names.length} clusters × ${cfg.objects})`,
    [
      {
        label: `ceiling (direct create + status write, concurrency ${ceilRuns[mid].concurrency}, best of ${
          cfg.ceilingConcurrencies.join("/")
        })`,
        color: "#9ca3af",
        points: ceilRuns[mid].series,
      },
      { label: "ceiling + one more watch stream", color: "#d97706", points: watchRuns[mid].series },
      {
        label: `operator-hub (watch → queue → reconcile, --concurrency ${cfg.concurrency})`,
        color: "#2563eb",
        points: hubRuns[mid].series,
      },
    ],
    `${host.cpus} × ${host.cpu_model}, ${host.memory_gb} GB; ${names.length} kube-apiservers + etcd on the same machine; Deno ${Deno.version.deno}; ${
      startedAt.slice(0, 16)
    }Z`,
  );
  out.chart_series = {
    hub: thinSeries(hubRuns[mid].series),
    ceiling: thinSeries(ceilRuns[mid].series),
    ceiling_with_watch: thinSeries(watchRuns[mid].series),
  };
  return svg;
}

function thinSeries(points: [number, number][], n = 200): [number, number][] {
  if (points.length <= n) return points.map(([t, c]) => [round(t, 3), c]);
  const step = points.length / n;
  const out: [number, number][] = [];
  for (let i = 0; i < n; i++) {
    const [t, c] = points[Math.floor(i * step)];
    out.push([round(t, 3), c]);
  }
  const [t, c] = points[points.length - 1];
  out.push([round(t, 3), c]);
  return out;
}

// The phases on what users create: a backlog made by `kubectl apply` (bench/lib/backlog.ts) and the throughput phase
// with kubectl-shaped objects, each on both CRD shapes, the hub and the kube-rs peer alternating in the same run,
// each against the ceiling measured in the same run.
//
// Guarantees: the CRD shape the clusters had before is restored afterwards, also when a run fails. Without a built
// peer the peer's columns are NaN and the build error is in the JSON; nothing is substituted.

import type { BenchCluster } from "../lib/cluster.ts";
import { type BacklogRun, backlogRun } from "../lib/backlog.ts";
import type { PeerBuild } from "../lib/peer.ts";
import { figure, type FigureInfo, json, type Row, shapeOf } from "../lib/report.ts";
import { type Config, log, setShape, type Shape } from "../lib/run.ts";
import { round, summarize, type Summary } from "../lib/stats.ts";
import { bestCeiling, type Disturbance, type RunKind, steadyRun, type ThroughputRun } from "../lib/throughput_run.ts";

/** One line of the hub-beside-peer table: a phase on one CRD shape. */
export interface Comparison {
  phase: string;
  shape: Shape;
  hubCpuMsPerObject: Summary;
  peerCpuMsPerObject: Summary;
  hubSeconds: Summary;
  peerSeconds: Summary;
  ceilingSeconds: Summary;
  ceilingWon: number[];
  ratioToCeiling: Summary;
  /** Hub rate over the peer's (≥ 1 means the hub is at least as fast). */
  peerRateRatio: Summary;
  /** Hub CPU per object over the peer's (≤ 1 means the hub is at least as lean). */
  peerCpuRatio: Summary;
  hubWritesPerObject: Summary;
  peerWritesPerObject: Summary;
  hubPeakRssMb: Summary;
  peerPeakRssMb: Summary;
  /** The controller-runtime peer (backlog phase only; NaN without it). */
  goPeerCpuMsPerObject?: Summary;
  goPeerSeconds?: Summary;
  goPeerPeakRssMb?: Summary;
}

/** What the phases share with main(): inputs, and where results go. */
export interface PhaseContext {
  cfg: Config;
  names: string[];
  cl: BenchCluster[];
  peer: PeerBuild | undefined;
  /** The controller-runtime peer, built when the peer or background phase is on. */
  goPeer?: PeerBuild;
  disturbed: Disturbance[];
  rows: Row[];
  out: Record<string, unknown>;
  figures: Record<string, FigureInfo>;
  comparisons: Comparison[];
}

/** The peer's binary when the peer phase is on and it built. */
export function peerBinary(ctx: PhaseContext): string | undefined {
  return ctx.peer?.ok ? ctx.peer.binary : undefined;
}

/** The controller-runtime peer's binary when it was built. */
export function goPeerBinary(ctx: PhaseContext): string | undefined {
  return ctx.goPeer?.ok ? ctx.goPeer.binary : undefined;
}

const ORDERS: ("hub" | "peer" | "ceiling")[][] = [
  ["hub", "peer", "ceiling"],
  ["peer", "ceiling", "hub"],
  ["ceiling", "hub", "peer"],
];

/** The backlog phase's rotation, with the controller-runtime peer. */
const BACKLOG_ORDERS: ("hub" | "peer" | "go_peer" | "ceiling")[][] = [
  ["hub", "peer", "go_peer", "ceiling"],
  ["peer", "go_peer", "ceiling", "hub"],
  ["go_peer", "ceiling", "hub", "peer"],
];

/** Runs `fn` on every shape of --shapes, restoring the shape the clusters had before. */
async function onEachShape(ctx: PhaseContext, fn: (shape: Shape) => Promise<void>): Promise<void> {
  const original = shapeOf(ctx.cl);
  try {
    for (const shape of ctx.cfg.shapes) {
      log(`CRD shape ${shape}: installing`);
      await setShape(ctx.cl, shape);
      await fn(shape);
    }
  } finally {
    await setShape(ctx.cl, original);
  }
}

/** Whether a measured median meets its target; undefined (no verdict) when it was not measured. */
function meets(v: number, target: (v: number) => boolean): boolean | undefined {
  return Number.isFinite(v) ? target(v) : undefined;
}

const NONE: Summary = { median: NaN, min: NaN, max: NaN, samples: [] };

// ------------------------------------------------------------------------------------------------
// Backlog

export async function backlogPhase(ctx: PhaseContext): Promise<void> {
  const { cfg, names, cl } = ctx;
  const bin = peerBinary(ctx);
  const goBin = goPeerBinary(ctx);
  const built = (kind: "hub" | "peer" | "go_peer") => kind === "hub" || (kind === "peer" ? !!bin : !!goBin);
  await onEachShape(ctx, async (shape) => {
    const runs: Record<"hub" | "peer" | "go_peer", BacklogRun[]> = { hub: [], peer: [], go_peer: [] };
    const empty: Record<"hub" | "peer" | "go_peer", BacklogRun[]> = { hub: [], peer: [], go_peer: [] };
    const ceil: BacklogRun[] = [];
    for (let r = 0; r < cfg.reps; r++) {
      for (const kind of ["hub", "peer", "go_peer"] as const) {
        if (!built(kind)) continue;
        const e = await backlogRun(cfg, names, cl, { kind, empty: true, peerBinary: bin, goPeerBinary: goBin });
        empty[kind].push(e);
        log(
          `backlog ${shape} rep ${r + 1} empty ${kind}: ready ${round(e.seconds, 2)} s, CPU ${round(e.cpuMs!, 0)} ms`,
        );
      }
      for (const kind of BACKLOG_ORDERS[r % BACKLOG_ORDERS.length]) {
        if (kind === "ceiling") {
          const levels: BacklogRun[] = [];
          for (const concurrency of cfg.ceilingConcurrencies) {
            levels.push(await backlogRun(cfg, names, cl, { kind: "ceiling", concurrency }));
          }
          const best = levels.reduce((a, b) => (b.seconds < a.seconds ? b : a));
          ceil.push(best);
          log(
            `backlog ${shape} rep ${r + 1} ceiling: ${
              levels.map((l) => `${l.concurrency}: ${round(l.seconds, 2)} s`).join(", ")
            }; best ${best.concurrency}`,
          );
          continue;
        }
        if (!built(kind)) continue;
        const run = await backlogRun(cfg, names, cl, { kind, peerBinary: bin, goPeerBinary: goBin });
        runs[kind].push(run);
        log(
          `backlog ${shape} rep ${r + 1} ${kind}: ${run.objects} objects (kubectl apply ${
            round(run.kubectlSeconds, 1)
          } s) drained ${round(run.seconds, 2)} s from process start (first Ok at ${
            round(run.firstSeconds ?? NaN, 2)
          } s), CPU ${round(run.cpuMs!, 0)} ms, writes/obj ${round(run.writesPerObject, 3)}, peak RSS ${
            round(run.peakRssMb!, 1)
          } MB, load ${round(run.load1, 1)}${run.missing ? `, ${run.missing} MISSING` : ""}`,
        );
      }
    }
    const netCpu = (kind: "hub" | "peer" | "go_peer") => {
      const base = summarize(empty[kind].map((e) => e.cpuMs!)).median;
      return runs[kind].map((r) => (r.cpuMs! - base) / r.objects);
    };
    const hubCpu = netCpu("hub"), peerCpu = netCpu("peer"), goCpu = netCpu("go_peer");
    const c: Comparison = {
      phase: "backlog",
      shape,
      hubCpuMsPerObject: summarize(hubCpu),
      peerCpuMsPerObject: bin ? summarize(peerCpu) : NONE,
      hubSeconds: summarize(runs.hub.map((r) => r.seconds)),
      peerSeconds: bin ? summarize(runs.peer.map((r) => r.seconds)) : NONE,
      ceilingSeconds: summarize(ceil.map((r) => r.seconds)),
      ceilingWon: ceil.map((r) => r.concurrency!),
      ratioToCeiling: summarize(runs.hub.map((h, i) => ceil[i].seconds / h.seconds)),
      peerRateRatio: bin ? summarize(runs.hub.map((h, i) => runs.peer[i].seconds / h.seconds)) : NONE,
      peerCpuRatio: bin ? summarize(hubCpu.map((h, i) => h / peerCpu[i])) : NONE,
      hubWritesPerObject: summarize(runs.hub.map((r) => r.writesPerObject)),
      peerWritesPerObject: bin ? summarize(runs.peer.map((r) => r.writesPerObject)) : NONE,
      hubPeakRssMb: summarize(runs.hub.map((r) => r.peakRssMb!)),
      peerPeakRssMb: bin ? summarize(runs.peer.map((r) => r.peakRssMb!)) : NONE,
      goPeerCpuMsPerObject: goBin ? summarize(goCpu) : NONE,
      goPeerSeconds: goBin ? summarize(runs.go_peer.map((r) => r.seconds)) : NONE,
      goPeerPeakRssMb: goBin ? summarize(runs.go_peer.map((r) => r.peakRssMb!)) : NONE,
    };
    ctx.comparisons.push(c);
    const info = figure({
      objects: cfg.backlogObjects,
      creation: "kubectl apply",
      shape,
      startup: true,
      ceiling: c.ceilingWon,
      runs: [...runs.hub, ...runs.peer, ...runs.go_peer, ...ceil],
    });
    const put = (key: string, s: Summary, digits = 3) => {
      ctx.out[key] = json(s, digits);
      ctx.figures[key] = info;
    };
    put(`backlog_cpu_ms_per_object_${shape}`, c.hubCpuMsPerObject, 4);
    put(`backlog_seconds_to_drain_${shape}`, c.hubSeconds);
    put(`backlog_ratio_to_ceiling_${shape}`, c.ratioToCeiling);
    // Where the drain's seconds go: before the first write (process start, lists, pre-flight) and after it.
    put(`backlog_seconds_to_first_ok_${shape}`, summarize(runs.hub.map((r) => r.firstSeconds ?? NaN)));
    if (bin) {
      put(
        `peer_kube_rs_backlog_seconds_to_first_ok_${shape}`,
        summarize(runs.peer.map((r) => r.firstSeconds ?? NaN)),
      );
    }
    put(`backlog_writes_per_object_${shape}`, c.hubWritesPerObject, 4);
    put(`rss_mb_backlog_${shape}`, c.hubPeakRssMb, 1);
    put(`peer_kube_rs_backlog_cpu_ms_per_object_${shape}`, c.peerCpuMsPerObject, 4);
    put(`peer_kube_rs_backlog_seconds_${shape}`, c.peerSeconds);
    put(`peer_kube_rs_drain_ratio_${shape}`, c.peerRateRatio);
    put(`peer_kube_rs_cpu_ratio_${shape}`, c.peerCpuRatio);
    put(`peer_kube_rs_rss_mb_backlog_${shape}`, c.peerPeakRssMb, 1);
    // The controller-runtime peer: per repetition, the hub's peak RSS over the Go peer's (≤ 1.0 is the goal).
    const goRss = goBin ? summarize(runs.hub.map((h, i) => h.peakRssMb! / runs.go_peer[i].peakRssMb!)) : NONE;
    const goDrain = goBin ? summarize(runs.hub.map((h, i) => runs.go_peer[i].seconds / h.seconds)) : NONE;
    const goCpuRatio = goBin ? summarize(hubCpu.map((h, i) => h / goCpu[i])) : NONE;
    put(`peer_controller_runtime_rss_ratio_backlog_${shape}`, goRss);
    put(`peer_controller_runtime_rss_mb_backlog_${shape}`, c.goPeerPeakRssMb!, 1);
    put(`peer_controller_runtime_backlog_cpu_ms_per_object_${shape}`, c.goPeerCpuMsPerObject!, 4);
    put(`peer_controller_runtime_backlog_seconds_${shape}`, c.goPeerSeconds!);
    put(`peer_controller_runtime_drain_ratio_${shape}`, goDrain);
    put(`peer_controller_runtime_cpu_ratio_${shape}`, goCpuRatio);
    if (goBin) {
      put(
        `peer_controller_runtime_backlog_seconds_to_first_ok_${shape}`,
        summarize(runs.go_peer.map((r) => r.firstSeconds ?? NaN)),
      );
    }
    ctx.out[`backlog_runs_${shape}`] = { hub: runs.hub, peer: runs.peer, go_peer: runs.go_peer, empty, ceiling: ceil };
    // The contract's headline keys are the seed article's CRD (the issue's scenario), else the status shape.
    if (shape === "seed" || !ctx.cfg.shapes.includes("seed")) {
      put("backlog_seconds_to_drain", c.hubSeconds);
      put("peer_kube_rs_drain_ratio", c.peerRateRatio);
      put("peer_kube_rs_cpu_ratio", c.peerCpuRatio);
      put("rss_mb_backlog_1500", c.hubPeakRssMb, 1);
      put("peer_controller_runtime_rss_ratio_backlog", goRss);
      put("backlog_seconds_to_first_ok", summarize(runs.hub.map((r) => r.firstSeconds ?? NaN)));
    }
    const label = `backlog, ${shape} CRD, ${names.length} × ${cfg.backlogObjects} by kubectl apply`;
    ctx.rows.push(
      {
        key: `backlog_cpu_ms_per_object_${shape}`,
        label: `${label}: hub CPU per object (net of an empty start)`,
        s: c.hubCpuMsPerObject,
        unit: "ms",
        target: "≤ 0.3",
        met: meets(c.hubCpuMsPerObject.median, (v) => v <= 0.3),
        digits: 3,
      },
      {
        key: `backlog_seconds_to_drain_${shape}`,
        label: `${label}: hub seconds from process start to all Ok`,
        s: c.hubSeconds,
        unit: "s",
      },
      {
        key: `backlog_writes_per_object_${shape}`,
        label: `${label}: hub writes per object`,
        s: c.hubWritesPerObject,
        unit: "",
        target: "1.00",
        met: Math.abs(c.hubWritesPerObject.median - 1) < 0.005,
        digits: 3,
      },
      {
        key: `peer_kube_rs_drain_ratio_${shape}`,
        label: `${label}: drain rate, hub over kube-rs peer`,
        s: c.peerRateRatio,
        unit: "",
        target: "≥ 1.0",
        met: meets(c.peerRateRatio.median, (v) => v >= 1),
      },
      {
        key: `peer_kube_rs_cpu_ratio_${shape}`,
        label: `${label}: CPU per object, hub over kube-rs peer`,
        s: c.peerCpuRatio,
        unit: "",
        target: "≤ 1.0",
        met: meets(c.peerCpuRatio.median, (v) => v <= 1),
      },
      {
        key: `rss_mb_backlog_${shape}`,
        label: `${label}: hub peak RSS`,
        s: c.hubPeakRssMb,
        unit: "MB",
        target: "≤ 70",
        met: meets(c.hubPeakRssMb.median, (v) => v <= 70),
        digits: 1,
      },
      {
        key: `peer_controller_runtime_rss_ratio_backlog_${shape}`,
        label: `${label}: peak RSS, hub over controller-runtime peer`,
        s: goRss,
        unit: "",
        target: "≤ 1.0",
        met: meets(goRss.median, (v) => v <= 1),
      },
    );
  });
}

// ------------------------------------------------------------------------------------------------
// kubectl-shaped throughput

export async function kubectlPhase(ctx: PhaseContext): Promise<void> {
  const { cfg, names, cl } = ctx;
  const bin = peerBinary(ctx);
  await onEachShape(ctx, async (shape) => {
    const runs: Record<"hub" | "peer" | "ceiling", ThroughputRun[]> = { hub: [], peer: [], ceiling: [] };
    const won: number[] = [];
    for (let r = 0; r < cfg.reps; r++) {
      for (const kind of ORDERS[r % ORDERS.length]) {
        if (kind === "peer" && !bin) continue;
        const opts = { creation: "kubectl" as const, peerBinary: bin };
        let run: ThroughputRun;
        if (kind === "ceiling") {
          const best = await bestCeiling(cfg, names, cl, opts, `kubectl ${shape}`, ctx.disturbed);
          run = best.best;
          won.push(run.concurrency);
        } else {
          run = await steadyRun(kind as RunKind, cfg, names, cl, opts, `kubectl ${shape}`, ctx.disturbed);
        }
        runs[kind].push(run);
        log(
          `kubectl ${shape} rep ${r + 1} ${kind}: ${round(run.objectsPerSecond, 0)} obj/s, ${round(run.seconds, 2)} s${
            run.cpuMsPerObject !== undefined ? `, CPU ${round(run.cpuMsPerObject, 3)} ms/object` : ""
          }, writes/obj ${round(run.writesPerObject, 3)}, load ${round(run.load1, 1)}`,
        );
      }
    }
    const S = (f: (r: ThroughputRun) => number, kind: "hub" | "peer" | "ceiling") =>
      kind === "peer" && !bin ? NONE : summarize(runs[kind].map(f));
    const c: Comparison = {
      phase: "kubectl",
      shape,
      hubCpuMsPerObject: S((r) => r.cpuMsPerObject!, "hub"),
      peerCpuMsPerObject: S((r) => r.cpuMsPerObject!, "peer"),
      hubSeconds: S((r) => r.seconds, "hub"),
      peerSeconds: S((r) => r.seconds, "peer"),
      ceilingSeconds: S((r) => r.seconds, "ceiling"),
      ceilingWon: won,
      ratioToCeiling: summarize(runs.hub.map((h, i) => h.objectsPerSecond / runs.ceiling[i].objectsPerSecond)),
      peerRateRatio: bin ? summarize(runs.hub.map((h, i) => h.objectsPerSecond / runs.peer[i].objectsPerSecond)) : NONE,
      peerCpuRatio: bin ? summarize(runs.hub.map((h, i) => h.cpuMsPerObject! / runs.peer[i].cpuMsPerObject!)) : NONE,
      hubWritesPerObject: S((r) => r.writesPerObject, "hub"),
      peerWritesPerObject: S((r) => r.writesPerObject, "peer"),
      hubPeakRssMb: S((r) => r.peakRssMb!, "hub"),
      peerPeakRssMb: S((r) => r.peakRssMb!, "peer"),
    };
    ctx.comparisons.push(c);
    const info = figure({
      objects: cfg.objects,
      creation: "kubectl",
      shape,
      startup: false,
      ceiling: won,
      runs: [...runs.hub, ...runs.peer, ...runs.ceiling],
    });
    const put = (key: string, s: Summary, digits = 3) => {
      ctx.out[key] = json(s, digits);
      ctx.figures[key] = info;
    };
    put(
      shape === "status" ? "kubectl_cpu_ms_per_object" : `kubectl_cpu_ms_per_object_${shape}`,
      c.hubCpuMsPerObject,
      4,
    );
    put(`kubectl_ratio_to_ceiling_${shape}`, c.ratioToCeiling);
    put(`kubectl_writes_per_object_${shape}`, c.hubWritesPerObject, 4);
    put(`peer_kube_rs_kubectl_cpu_ms_per_object_${shape}`, c.peerCpuMsPerObject, 4);
    put(`peer_kube_rs_kubectl_rate_ratio_${shape}`, c.peerRateRatio);
    put(`peer_kube_rs_kubectl_cpu_ratio_${shape}`, c.peerCpuRatio);
    const strip = (r: ThroughputRun) => ({ ...r, series: undefined });
    ctx.out[`kubectl_runs_${shape}`] = {
      hub: runs.hub.map(strip),
      peer: runs.peer.map(strip),
      ceiling: runs.ceiling.map(strip),
    };
    const label = `kubectl, ${shape} CRD, ${names.length} × ${cfg.objects} created as kubectl does`;
    ctx.rows.push(
      {
        key: `kubectl_cpu_ms_per_object_${shape}`,
        label: `${label}: hub CPU per object`,
        s: c.hubCpuMsPerObject,
        unit: "ms",
        target: "≤ 0.3",
        met: meets(c.hubCpuMsPerObject.median, (v) => v <= 0.3),
        digits: 3,
      },
      {
        key: `kubectl_ratio_to_ceiling_${shape}`,
        label: `${label}: ratio to the ceiling`,
        s: c.ratioToCeiling,
        unit: "",
        target: "≥ 0.8",
        met: meets(c.ratioToCeiling.median, (v) => v >= 0.8),
      },
      {
        key: `kubectl_writes_per_object_${shape}`,
        label: `${label}: hub writes per object`,
        s: c.hubWritesPerObject,
        unit: "",
        target: "1.00",
        met: Math.abs(c.hubWritesPerObject.median - 1) < 0.005,
        digits: 3,
      },
      {
        key: `peer_kube_rs_kubectl_cpu_ratio_${shape}`,
        label: `${label}: CPU per object, hub over kube-rs peer`,
        s: c.peerCpuRatio,
        unit: "",
        target: "≤ 1.0",
        met: meets(c.peerCpuRatio.median, (v) => v <= 1),
      },
    );
  });
}

/** The hub-beside-peer table: one row per phase and CRD shape. */
export function comparisonTable(comparisons: Comparison[]): string {
  const v = (s: Summary, d = 2) => Number.isFinite(s.median) ? `${round(s.median, d)}` : "n/a";
  const lines = [
    "| phase | CRD | hub CPU ms/object | peer CPU ms/object | hub s | peer s | ceiling s (won at) | ratio to ceiling | " +
    "rate hub/peer | CPU hub/peer | writes/object hub, peer | peak RSS MB hub, peer | Go peer CPU ms/object, s, peak RSS MB |",
    "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
  ];
  for (const c of comparisons) {
    lines.push(
      `| ${c.phase} | ${c.shape} | ${v(c.hubCpuMsPerObject, 3)} | ${v(c.peerCpuMsPerObject, 3)} | ${
        v(c.hubSeconds)
      } | ${v(c.peerSeconds)} | ${v(c.ceilingSeconds)} (${[...new Set(c.ceilingWon)].join("/")}) | ${
        v(c.ratioToCeiling)
      } | ${v(c.peerRateRatio)} | ${v(c.peerCpuRatio)} | ${v(c.hubWritesPerObject, 3)}, ${
        v(c.peerWritesPerObject, 3)
      } | ${v(c.hubPeakRssMb, 1)}, ${v(c.peerPeakRssMb, 1)} | ${
        c.goPeerSeconds ? `${v(c.goPeerCpuMsPerObject!, 3)}, ${v(c.goPeerSeconds)}, ${v(c.goPeerPeakRssMb!, 1)}` : ""
      } |`,
    );
  }
  return lines.join("\n");
}

// The idle phase: single objects created one at a time on an idle hub (and the kube-rs peer, alternating); latency
// from create to status Ok.

import type { BenchCluster } from "../lib/cluster.ts";
import { sleep } from "../lib/hub.ts";
import { figure, json, shapeOf } from "../lib/report.ts";
import { type Config, load1, log, type OperatorKind, startOperator, withNamespace } from "../lib/run.ts";
import { percentile, round, summarize } from "../lib/stats.ts";
import { peerBinary, type PhaseContext } from "./user_phases.ts";

/** Idle latency p50/p99, and beside the peer when it built: rows, `idle_latency_ms`, the peer's ratio. */
export async function idlePhase(ctx: PhaseContext): Promise<void> {
  const { cfg, names, cl, rows, out, figures } = ctx;
  const bin = peerBinary(ctx);
  const reps: number[][] = [];
  const peerReps: number[][] = [];
  const loads: { load1: number }[] = [];
  for (let r = 0; r < cfg.reps; r++) {
    // Alternating which goes first; the peer only when the peer phase is on and it built.
    const kinds: OperatorKind[] = bin ? (r % 2 ? ["peer", "hub"] : ["hub", "peer"]) : ["hub"];
    for (const kind of kinds) {
      loads.push({ load1: load1() });
      (kind === "hub" ? reps : peerReps).push(...await idleRuns(cfg, names, cl, kind, 1, bin));
    }
  }
  const p50 = summarize(reps.map((l) => percentile(l, 50)));
  if (bin) {
    const peerP50 = summarize(peerReps.map((l) => percentile(l, 50)));
    const ratio = summarize(reps.map((l, i) => percentile(l, 50) / percentile(peerReps[i], 50)));
    rows.push(
      { key: "peer_idle_p50", label: "kube-rs peer idle_latency_ms p50", s: peerP50, unit: "ms", digits: 1 },
      {
        key: "peer_kube_rs_idle_latency_ratio",
        label: "idle latency p50, hub over kube-rs peer",
        s: ratio,
        unit: "",
        target: "≤ 1.0",
        met: ratio.median <= 1,
      },
    );
    out.peer_kube_rs_idle_latency_ms = {
      p50: json(peerP50, 2),
      all: peerReps.map((l) => l.map((v) => round(v, 2))),
    };
    out.peer_kube_rs_idle_latency_ratio = json(ratio);
  }
  figures.idle_latency_ms = figures.peer_kube_rs_idle_latency_ratio = figure({
    objects: cfg.idleObjects,
    creation: "plain",
    shape: shapeOf(cl),
    startup: false,
    runs: loads,
  });
  const p99 = summarize(reps.map((l) => percentile(l, 99)));
  rows.push(
    {
      key: "idle_p50",
      label: "idle_latency_ms p50",
      s: p50,
      unit: "ms",
      target: "≤ 25",
      met: p50.median <= 25,
      digits: 1,
    },
    { key: "idle_p99", label: "idle_latency_ms p99", s: p99, unit: "ms", digits: 1 },
  );
  out.idle_latency_ms = { p50: json(p50, 2), p99: json(p99, 2), all: reps.map((l) => l.map((v) => round(v, 2))) };
}

/** `reps` repetitions of single creates on an idle hub or peer (one start); latency create → Ok per object. */
async function idleRuns(
  cfg: Config,
  names: string[],
  cl: BenchCluster[],
  kind: OperatorKind,
  repCount: number,
  peerBinary?: string,
): Promise<number[][]> {
  return await withNamespace(cl, `idle-${kind}`, async (ns) => {
    const watches = await Promise.all(cl.map((c) => c.watchOk(ns)));
    const op = startOperator(kind, cfg, names, ns, peerBinary, cl[0].statusSubresource);
    try {
      await op.waitReady();
      await sleep(1000);
      const reps: number[][] = [];
      for (let r = 0; r < repCount; r++) {
        const lat: number[] = [];
        for (let j = 0; j < cfg.idleObjects; j++) {
          const i = j % cl.length;
          const name = `idle-${r}-${String(j).padStart(4, "0")}`;
          const t = performance.now();
          await cl[i].create(ns, name);
          lat.push((await watches[i].waitName(name, 30_000)) - t);
          await sleep(100);
        }
        reps.push(lat);
        log(`idle ${kind}: p50 ${round(percentile(lat, 50), 1)} ms, p99 ${round(percentile(lat, 99), 1)} ms`);
        await sleep(500);
      }
      return reps;
    } finally {
      await op.stop();
      await Promise.all(watches.map((w) => w.stop()));
    }
  });
}

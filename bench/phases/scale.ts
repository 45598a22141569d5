// The scale phase: S objects per cluster; one first start that writes them all, then restarts onto finished objects:
// startup to ready, RSS.

import type { BenchCluster, OkWatch } from "../lib/cluster.ts";
import { sleep } from "../lib/hub.ts";
import { figure, json, shapeOf } from "../lib/report.ts";
import { type Config, load1, log, objectNames, startBenchHub, withNamespace } from "../lib/run.ts";
import { round, summarize } from "../lib/stats.ts";
import { goPeerBinary, type PhaseContext } from "./user_phases.ts";
import { PeerProcess } from "../lib/peer.ts";

/** Memory and start-up rows, `rss_mb_at_10k_per_cluster`, `rss_mb_first_start_peak` and the other scale keys. */
export async function scalePhase(ctx: PhaseContext): Promise<void> {
  const { cfg, names, cl, rows, out, figures } = ctx;
  const res = await scaleRuns(cfg, names, cl);
  const ready = summarize(res.runs.map((r) => r.readySeconds));
  const peak = summarize(res.runs.map((r) => r.peakRssMb));
  const rss = summarize(res.runs.map((r) => r.rssMb));
  const label = `${names.length} × ${cfg.scaleObjects}`;
  rows.push(
    {
      key: "rss_mb_at_10k_per_cluster",
      label: `rss_mb_at_10k_per_cluster (peak, ${label})`,
      s: peak,
      unit: "MB",
      target: "≤ 100",
      met: peak.median <= 100,
      digits: 1,
    },
    { key: "rss_steady", label: `RSS after sync, steady (${label})`, s: rss, unit: "MB", digits: 1 },
    {
      key: "startup_to_ready_seconds",
      label: `startup_to_ready_seconds (${label})`,
      s: ready,
      unit: "s",
      target: "≤ 5",
      met: ready.median <= 5,
      digits: 2,
    },
    {
      key: "restart_to_idle",
      label: `restart to queue drained (${label})`,
      s: summarize(res.runs.map((r) => r.idleSeconds)),
      unit: "s",
      digits: 2,
    },
  );
  out.rss_mb_at_10k_per_cluster = json(peak, 1);
  out.rss_steady_mb_at_10k_per_cluster = json(rss, 1);
  out.startup_to_ready_seconds = json(ready, 3);
  out.scale = res;
  out.rss_mb_first_start_peak = round(res.firstStart.peakRssMb, 1);
  figures.rss_mb_first_start_peak = figures.rss_mb_at_10k_per_cluster = figure({
    objects: cfg.scaleObjects,
    creation: "plain",
    shape: shapeOf(cl),
    startup: true,
    runs: [{ load1: load1() }],
  });
  rows.push({
    key: "rss_mb_first_start_peak",
    label: `rss_mb_first_start_peak (first start writing all ${names.length} × ${cfg.scaleObjects} UUIDs)`,
    s: summarize([res.firstStart.peakRssMb]),
    unit: "MB",
    target: "≤ 100",
    met: res.firstStart.peakRssMb <= 100,
    digits: 1,
  });
  const goBin = goPeerBinary(ctx);
  if (!goBin) return;
  // The controller-runtime peer on the same S per cluster in a namespace of its own: its first start writing them
  // all, then one restart onto finished objects. peer_controller_runtime_rss_ratio_10k is first start over first start.
  const go = await goScaleRun(cfg, names, cl, goBin);
  const ratio = res.firstStart.peakRssMb / go.firstStartPeakRssMb;
  const restartPeak = summarize(res.runs.map((r) => r.peakRssMb)).median;
  out.peer_controller_runtime_rss_ratio_10k = round(ratio, 3);
  out.peer_controller_runtime_rss_ratio_10k_restart = round(restartPeak / go.restartPeakRssMb, 3);
  out.peer_controller_runtime_scale = go;
  figures.peer_controller_runtime_rss_ratio_10k = figures.rss_mb_first_start_peak;
  rows.push({
    key: "peer_controller_runtime_rss_ratio_10k",
    label:
      `peer_controller_runtime_rss_ratio_10k (first-start peak RSS, hub ${round(res.firstStart.peakRssMb, 1)} MB ` +
      `over controller-runtime peer ${round(go.firstStartPeakRssMb, 1)} MB, ${label})`,
    s: summarize([ratio]),
    unit: "",
    target: "≤ 1.0",
    met: ratio <= 1,
    digits: 2,
  });
}

interface GoScaleResult {
  createSeconds: number;
  firstStartSeconds: number;
  firstStartPeakRssMb: number;
  restartReadySeconds: number;
  restartPeakRssMb: number;
  restartRssMb: number;
}

async function goScaleRun(cfg: Config, names: string[], cl: BenchCluster[], bin: string): Promise<GoScaleResult> {
  const S = cfg.scaleObjects;
  return await withNamespace(cl, "scale-go-peer", async (ns) => {
    const t0 = performance.now();
    await Promise.all(cl.map((c) => c.createMany(ns, objectNames("s-", S), 32)));
    const createSeconds = (performance.now() - t0) / 1000;
    const watches: OkWatch[] = await Promise.all(cl.map((c) => c.watchOk(ns)));
    let first: { seconds: number; peak: number };
    const peer = PeerProcess.start(bin, names, ns, cl[0].statusSubresource);
    try {
      await Promise.all(watches.map((w) => w.waitCount(S, 600_000)));
      const seconds = (performance.now() - peer.spawnedAt) / 1000;
      await sleep(500);
      first = { seconds, peak: peer.memory().peak };
      log(
        `scale: controller-runtime peer first start wrote ${S * cl.length} UUIDs in ${round(seconds, 1)} s, ` +
          `peak RSS ${round(first.peak, 1)} MB`,
      );
    } finally {
      await peer.stop();
      await Promise.all(watches.map((w) => w.stop()));
    }
    await sleep(1000);
    const again = PeerProcess.start(bin, names, ns, cl[0].statusSubresource);
    try {
      const ready = await again.waitReady();
      await sleep(1500);
      const m = again.memory();
      log(
        `scale: controller-runtime peer restart synced in ${round(ready, 2)} s, RSS ${round(m.rss, 1)} MB, ` +
          `peak ${round(m.peak, 1)} MB`,
      );
      return {
        createSeconds,
        firstStartSeconds: first.seconds,
        firstStartPeakRssMb: first.peak,
        restartReadySeconds: ready,
        restartPeakRssMb: m.peak,
        restartRssMb: m.rss,
      };
    } finally {
      await again.stop();
    }
  });
}

interface ScaleResult {
  createSeconds: number;
  firstStart: {
    readySeconds: number;
    drainSeconds: number;
    objectsPerSecond: number;
    peakRssMb: number;
    /** The hub's CPU from spawn to drained (the watch of every UUID seen), over the objects. */
    cpuMsPerObject: number;
  };
  runs: { readySeconds: number; idleSeconds: number; rssMb: number; peakRssMb: number; cpuMs: number }[];
}

async function scaleRuns(cfg: Config, names: string[], cl: BenchCluster[]): Promise<ScaleResult> {
  const S = cfg.scaleObjects;
  return await withNamespace(cl, "scale", async (ns) => {
    const t0 = performance.now();
    await Promise.all(cl.map((c) => c.createMany(ns, objectNames("s-", S), 32)));
    const createSeconds = (performance.now() - t0) / 1000;
    log(`scale: created ${S * cl.length} objects in ${round(createSeconds, 1)} s`);

    // First start: every object still needs its one status write.
    const watches: OkWatch[] = await Promise.all(cl.map((c) => c.watchOk(ns)));
    let first: ScaleResult["firstStart"];
    {
      const hub = startBenchHub(cfg, names, ns);
      try {
        const readySeconds = await hub.waitReady();
        const readyAt = performance.now();
        await Promise.all(watches.map((w) => w.waitCount(S, 600_000)));
        const drainSeconds = (performance.now() - readyAt) / 1000;
        const cpuMsPerObject = hub.cpuMs() / (S * cl.length);
        await hub.waitIdle(400);
        first = {
          readySeconds,
          drainSeconds,
          objectsPerSecond: S * cl.length / drainSeconds,
          peakRssMb: hub.memory().peak,
          cpuMsPerObject,
        };
        log(
          `scale: first start ready in ${round(readySeconds, 2)} s, ${S * cl.length} writes in ${
            round(drainSeconds, 1)
          } s, ${round(cpuMsPerObject, 3)} ms of hub CPU per object, peak RSS ${round(first.peakRssMb, 1)} MB`,
        );
      } finally {
        await hub.stop();
        await Promise.all(watches.map((w) => w.stop()));
      }
    }

    // Restarts: every object already has its UUID (the steady state of a hub pod restart).
    const runs: ScaleResult["runs"] = [];
    for (let r = 0; r < cfg.reps; r++) {
      await sleep(1000);
      const hub = startBenchHub(cfg, names, ns);
      try {
        const readySeconds = await hub.waitReady();
        await hub.waitIdle(500);
        const idleSeconds = (performance.now() - hub.spawnedAt) / 1000;
        await sleep(1000);
        const m = hub.memory();
        runs.push({ readySeconds, idleSeconds, rssMb: m.rss, peakRssMb: m.peak, cpuMs: hub.cpuMs() });
        log(
          `scale rep ${r + 1}: ready ${round(readySeconds, 2)} s, idle ${round(idleSeconds, 2)} s, RSS ${
            round(m.rss, 1)
          } MB, peak ${round(m.peak, 1)} MB`,
        );
      } finally {
        await hub.stop();
      }
    }
    return { createSeconds, firstStart: first, runs };
  });
}

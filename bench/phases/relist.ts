// The relist phase: live creates while the hub lists and works through N objects per cluster (its first list of a
// backlog: every object queued at once, as a relist or a resync does), against the same creates once it is idle.
//
// Keys: `live_p99_during_relist_ms` (create → status Ok p99 of the live creates made while the listed objects are
// still being reconciled), `idle_p99_ms` (the same creates on the same hub once it drained), and their ratio
// `live_p99_during_relist_ratio` (goal ≤ 2).

import type { BenchCluster } from "../lib/cluster.ts";
import { sleep } from "../lib/hub.ts";
import { json } from "../lib/report.ts";
import { type Config, load1, log, objectNames, startBenchHub, withNamespace } from "../lib/run.ts";
import { percentile, round, summarize } from "../lib/stats.ts";
import type { PhaseContext } from "./user_phases.ts";

/** Live creates measured per run while the backlog drains (fewer when it drains first), and again when idle. */
export const LIVE_SAMPLES = 20;

/** One hub's run: live and idle latencies (ms), with what the backlog did meanwhile. */
export interface RelistRun {
  /** Objects listed per cluster. */
  objects: number;
  /** Create → Ok of each live create made while listed objects were still waiting. */
  liveMs: number[];
  /** Create → Ok of the same creates once the hub drained, same hub. */
  idleMs: number[];
  /**
   * How long each live create's own POST took (a control: the API server's latency during the drain, which no
   * queue order can save).
   */
  livePostMs: number[];
  /** The same for the idle creates. */
  idlePostMs: number[];
  /** Listed objects not yet Ok when the last live create was made, summed over clusters. */
  listedLeftAtLastLive: number;
  /** Seconds from the first listed object Ok to the last. */
  drainSeconds: number;
  /** Seconds from the hub's spawn to its first listed object Ok. */
  firstOkSeconds: number;
  load1: number;
}

/** Relist rows and keys; `objects` per cluster defaults to the scale phase's (`--scale-objects`). */
export async function relistPhase(ctx: PhaseContext): Promise<void> {
  const { cfg, names, cl, rows, out } = ctx;
  const runs: RelistRun[] = [];
  for (let r = 0; r < cfg.reps; r++) runs.push(await relistRun(cfg, names, cl, cfg.scaleObjects));
  const live = summarize(runs.map((r) => percentile(r.liveMs, 99)));
  const idle = summarize(runs.map((r) => percentile(r.idleMs, 99)));
  const ratio = summarize(runs.map((r) => percentile(r.liveMs, 99) / percentile(r.idleMs, 99)));
  rows.push(
    {
      key: "live_p99_during_relist_ms",
      label: `live create → Ok p99 while ${cl.length} × ${cfg.scaleObjects} listed objects drain`,
      s: live,
      unit: "ms",
      digits: 1,
    },
    { key: "idle_p99_ms", label: "the same creates on the same hub, idle: p99", s: idle, unit: "ms", digits: 1 },
    {
      key: "live_p99_during_relist_ratio",
      label: "live p99 during the relist over idle p99",
      s: ratio,
      unit: "",
      target: "≤ 2",
      met: ratio.median <= 2,
    },
  );
  out.live_p99_during_relist_ms = json(live, 1);
  out.idle_p99_ms = json(idle, 1);
  out.live_p99_during_relist_ratio = json(ratio, 2);
  out.relist_runs = runs.map(rounded);
}

/** One run of the hub (`cfg.hubEntry`, or `entry`) on `objects` listed objects per cluster. */
export async function relistRun(
  cfg: Config,
  names: string[],
  cl: BenchCluster[],
  objects: number,
  entry?: string,
): Promise<RelistRun> {
  return await withNamespace(cl, "relist", async (ns) => {
    const listed = objectNames("r-", objects);
    const made = performance.now();
    await Promise.all(cl.map((c) => c.createMany(ns, listed, 32)));
    log(`relist: ${cl.length} × ${objects} objects made in ${round((performance.now() - made) / 1000, 1)} s`);
    const watches = await Promise.all(cl.map((c) => c.watchOk(ns)));
    const hub = startBenchHub(entry ? { ...cfg, hubEntry: entry } : cfg, names, ns);
    const listedOk = () => watches.reduce((n, w) => n + [...w.seen.keys()].filter((k) => k.startsWith("r-")).length, 0);
    try {
      const loadAt = load1();
      await Promise.race(watches.map((w) => w.waitCount(1, 300_000)));
      const firstOkSeconds = (performance.now() - hub.spawnedAt) / 1000;
      const liveMs: number[] = [];
      const livePostMs: number[] = [];
      let listedLeftAtLastLive = 0;
      for (let j = 0; liveMs.length < LIVE_SAMPLES; j++) {
        const left = objects * cl.length - listedOk();
        if (left === 0) break;
        listedLeftAtLastLive = left;
        const [ok, post] = await createAndWait(cl, watches, ns, `live-${j}`, j);
        liveMs.push(ok);
        livePostMs.push(post);
        await sleep(100);
      }
      await Promise.all(watches.map((w) => w.waitCount(objects, 600_000)));
      const times = watches.flatMap((w) => [...w.seen].filter(([k]) => k.startsWith("r-")).map(([, t]) => t));
      const drainSeconds = (Math.max(...times) - Math.min(...times)) / 1000;
      await hub.waitIdle(500, 120_000);
      const idleMs: number[] = [];
      const idlePostMs: number[] = [];
      for (let j = 0; j < LIVE_SAMPLES; j++) {
        const [ok, post] = await createAndWait(cl, watches, ns, `idle-${j}`, j);
        idleMs.push(ok);
        idlePostMs.push(post);
        await sleep(100);
      }
      const run = {
        objects,
        liveMs,
        idleMs,
        livePostMs,
        idlePostMs,
        listedLeftAtLastLive,
        drainSeconds,
        firstOkSeconds,
        load1: loadAt,
      };
      log(
        `relist${entry ? ` (${entry})` : ""}: ${liveMs.length} live creates during the drain, p99 ${
          round(percentile(liveMs, 99), 1)
        } ms (POST alone p99 ${
          round(percentile(livePostMs, 99), 1)
        } ms; ${listedLeftAtLastLive} listed left at the last); idle p99 ${
          round(percentile(idleMs, 99), 1)
        } ms; drain ${round(drainSeconds, 1)} s`,
      );
      return run;
    } finally {
      await hub.stop();
      await Promise.all(watches.map((w) => w.stop()));
    }
  });
}

/** Creates `name` in cluster `j mod n`; resolves with ms from the create to its status Ok, and the POST's own ms. */
async function createAndWait(
  cl: BenchCluster[],
  watches: { waitName(name: string, timeoutMs: number): Promise<number> }[],
  ns: string,
  name: string,
  j: number,
): Promise<[number, number]> {
  const i = j % cl.length;
  const t = performance.now();
  await cl[i].create(ns, name);
  const posted = performance.now() - t;
  return [(await watches[i].waitName(name, 600_000)) - t, posted];
}

/** A run with its figures rounded for the JSON. */
export function rounded(r: RelistRun): Record<string, unknown> {
  return {
    ...r,
    liveMs: r.liveMs.map((v) => round(v, 1)),
    idleMs: r.idleMs.map((v) => round(v, 1)),
    livePostMs: r.livePostMs.map((v) => round(v, 1)),
    idlePostMs: r.idlePostMs.map((v) => round(v, 1)),
    drainSeconds: round(r.drainSeconds, 2),
    firstOkSeconds: round(r.firstOkSeconds, 3),
    live_p99_ms: round(percentile(r.liveMs, 99), 1),
    idle_p99_ms: round(percentile(r.idleMs, 99), 1),
    live_post_p99_ms: round(percentile(r.livePostMs, 99), 1),
    idle_post_p99_ms: round(percentile(r.idlePostMs, 99), 1),
  };
}

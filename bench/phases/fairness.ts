// The fairness phase: F objects waiting in cluster A when the hub starts, then one object in cluster B; how long B
// waits, as a share of A's drain.

import type { BenchCluster } from "../lib/cluster.ts";
import { json } from "../lib/report.ts";
import { type Config, log, objectNames, startBenchHub, withNamespace } from "../lib/run.ts";
import { round, summarize } from "../lib/stats.ts";
import type { PhaseContext } from "./user_phases.ts";

/** Fairness rows and `fairness_*` keys; skipped with fewer than two clusters. */
export async function fairnessPhase(ctx: PhaseContext): Promise<void> {
  const { cfg, names, cl, rows, out } = ctx;
  if (cl.length < 2) {
    log("fairness: skipped, needs at least 2 clusters");
  } else {
    const runs: FairnessRun[] = [];
    for (let r = 0; r < cfg.reps; r++) {
      const run = await fairnessRun(cfg, names, cl);
      runs.push(run);
      log(
        `fairness rep ${r + 1}: B waited ${round(run.waitMs, 1)} ms while A drained ${cfg.fairnessObjects} in ${
          round(run.drainMs, 0)
        } ms (${round(run.pctOfDrain, 2)}%), ${run.aLeftWhenBDone} of A still pending`,
      );
    }
    const wait = summarize(runs.map((r) => r.waitMs));
    const pct = summarize(runs.map((r) => r.pctOfDrain));
    rows.push(
      {
        key: "fairness_wait_ms",
        label: `fairness_wait_ms (B, while A drains ${cfg.fairnessObjects})`,
        s: wait,
        unit: "ms",
        digits: 1,
      },
      {
        key: "fairness_pct",
        label: "fairness wait as % of A's drain",
        s: pct,
        unit: "%",
        target: "≤ 5%",
        met: pct.median <= 5,
        digits: 2,
      },
      {
        key: "fairness_drain",
        label: "A's drain time",
        s: summarize(runs.map((r) => r.drainMs)),
        unit: "ms",
        digits: 0,
      },
    );
    out.fairness_wait_ms = json(wait, 2);
    out.fairness_pct_of_drain = json(pct, 3);
    out.fairness_runs = runs;
  }
}

interface FairnessRun {
  waitMs: number;
  drainMs: number;
  pctOfDrain: number;
  aLeftWhenBDone: number;
}

async function fairnessRun(cfg: Config, names: string[], cl: BenchCluster[]): Promise<FairnessRun> {
  const [a, b] = cl;
  return await withNamespace(cl, "fair", async (ns) => {
    await a.createMany(ns, objectNames("a-", cfg.fairnessObjects), 32);
    const [wa, wb] = await Promise.all([a.watchOk(ns), b.watchOk(ns)]);
    const hub = startBenchHub(cfg, names, ns);
    try {
      await wa.waitCount(1, 60_000);
      const t = performance.now();
      await b.create(ns, "b-lonely");
      const seenB = await wb.waitName("b-lonely", 60_000);
      const aLeft = cfg.fairnessObjects - [...wa.seen.values()].filter((at) => at <= seenB).length;
      await wa.waitCount(cfg.fairnessObjects, 300_000);
      const times = [...wa.seen.values()].sort((x, y) => x - y);
      const drainMs = times[times.length - 1] - times[0];
      const waitMs = seenB - t;
      return { waitMs, drainMs, pctOfDrain: 100 * waitMs / drainMs, aLeftWhenBDone: aLeft };
    } finally {
      await hub.stop();
      await Promise.all([wa.stop(), wb.stop()]);
    }
  });
}

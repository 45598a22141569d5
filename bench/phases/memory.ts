// The memory phase: the idle hub's RSS with each optional feature off and on, split into file-backed and anonymous
// pages (bench/lib/idle_rss.ts, as bench/tools/idle_rss_features.ts prints it), and the peak RSS of the hub draining
// the seed backlog (bench/lib/backlog.ts, as bench/tools/ab.ts measures it with `--shapes seed`).
//
// The idle hubs get --hub-arg flags but not --hub-deno-flag ones (they run as `deno task run` runs the hub).
// Assumptions: the idle hubs watch every namespace of the clusters, so objects other work leaves there are counted;
// the backlog runs put the Uuid CRD into its seed shape and put back the shape they found.

import { backlogRun } from "../lib/backlog.ts";
import { idleRssByFeature, idleRssJson } from "../lib/idle_rss.ts";
import { figure, json, shapeOf } from "../lib/report.ts";
import { log, setShape } from "../lib/run.ts";
import { round, summarize, type Summary } from "../lib/stats.ts";
import type { PhaseContext } from "./user_phases.ts";

/** Idle RSS by feature and the seed backlog's peak RSS: rows, `idle_rss_mb` (with file and anon), the per-feature
 * table `idle_rss_by_feature`, `backlog_peak_rss_mb`. */
export async function memoryPhase(ctx: PhaseContext): Promise<void> {
  const { cfg, names, cl, rows, out, figures } = ctx;
  const byFeature = await idleRssByFeature({
    reps: cfg.reps,
    entry: cfg.hubEntry,
    clusters: names,
    args: cfg.hubArgs,
    log: (line) => log(`memory idle ${line}`),
  });
  const base = byFeature[0];
  Object.assign(out, idleRssJson(byFeature));

  const original = shapeOf(cl);
  const peaks: number[] = [];
  const backlogLoads: { load1: number }[] = [];
  try {
    await setShape(cl, "seed");
    for (let r = 0; r < cfg.reps; r++) {
      const run = await backlogRun(cfg, names, cl, { kind: "hub", empty: false });
      if (run.missing > 0) log(`memory backlog: ${run.missing} objects never became Ok`);
      peaks.push(run.peakRssMb ?? NaN);
      backlogLoads.push({ load1: run.load1 });
      log(`memory backlog rep ${r + 1}: peak ${round(run.peakRssMb ?? NaN, 1)} MB, ${round(run.seconds)} s`);
    }
  } finally {
    await setShape(cl, original);
  }
  const peak = summarize(peaks);
  out.backlog_peak_rss_mb = json(peak, 1);
  figures.backlog_peak_rss_mb = figure({
    objects: cfg.backlogObjects,
    creation: "kubectl apply",
    shape: "seed",
    startup: true,
    runs: backlogLoads,
  });
  rows.push(
    { key: "idle_rss_mb", label: "idle_rss_mb (default operators)", s: base.rss, unit: "MB", ...goal(base.rss, 70) },
    { key: "idle_rss_file_mb", label: "idle_rss_file_mb (RssFile)", s: base.file, unit: "MB", digits: 1 },
    { key: "idle_rss_anon_mb", label: "idle_rss_anon_mb (RssAnon)", s: base.anon, unit: "MB", digits: 1 },
    { key: "backlog_peak_rss_mb", label: "backlog_peak_rss_mb (seed)", s: peak, unit: "MB", ...goal(peak, 90) },
  );
}

function goal(s: Summary, atMost: number): { target: string; met: boolean; digits: number } {
  return { target: `≤ ${atMost}`, met: s.median <= atMost, digits: 1 };
}

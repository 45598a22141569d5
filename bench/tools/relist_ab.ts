// A/B of two hub builds on the relist phase in the same run: `deno run -A bench/tools/relist_ab.ts --a BASE --b src/cli/main.ts`.
//
// Each repetition gives both variants a fresh namespace with N objects per cluster listed at start and live creates
// meanwhile (bench/phases/relist.ts), alternating which goes first; the report gives each variant's live p99 during
// the drain, idle p99 on the same hub, and their ratio. `--a-arg FLAG` / `--b-arg FLAG` add hub flags to one variant. A baseline is any checkout, e.g.
// `git archive HEAD~1 | tar -x -C .cache/ab-base` (then `--a .cache/ab-base/src/cli/main.ts`).

import { parseArgs } from "node:util";
import { requireClusters } from "../../dev/support/local_clusters.ts";
import { BenchCluster } from "../lib/cluster.ts";
import { parseConfig } from "../lib/config.ts";
import { type RelistRun, relistRun, rounded } from "../phases/relist.ts";
import { log } from "../lib/run.ts";
import { percentile, round, summarize } from "../lib/stats.ts";

const { values } = parseArgs({
  args: Deno.args,
  strict: true,
  options: {
    a: { type: "string", default: "src/cli/main.ts" },
    b: { type: "string", default: "src/cli/main.ts" },
    "a-arg": { type: "string", multiple: true },
    "b-arg": { type: "string", multiple: true },
    objects: { type: "string", default: "10000" },
    reps: { type: "string", default: "1" },
    clusters: { type: "string", default: "3" },
    out: { type: "string", default: "bench/last_relist_ab.json" },
  },
});
const objects = Number(values.objects);
const reps = Number(values.reps);
const want = Number(values.clusters);
if (![objects, reps, want].every((n) => Number.isInteger(n) && n >= 1)) {
  console.error("relist_ab: --objects, --reps and --clusters must be positive whole numbers");
  Deno.exit(2);
}
const names = requireClusters().names.slice(0, want);
const cl = names.map((n) => new BenchCluster(n));
await Promise.all(cl.map((c) => c.detect()));
// The hub's own defaults (concurrency scaled by clusters), as a user runs it.
const cfg = { ...parseConfig([]), hubDefaultConcurrency: true };
const variants = [
  { label: "A", entry: values.a, args: values["a-arg"] ?? [] },
  { label: "B", entry: values.b, args: values["b-arg"] ?? [] },
];
const runs: Record<string, RelistRun[]> = { A: [], B: [] };
try {
  for (let r = 0; r < reps; r++) {
    for (const v of r % 2 ? [...variants].reverse() : variants) {
      log(`rep ${r + 1}: ${v.label} (${[v.entry, ...v.args].join(" ")})`);
      runs[v.label].push(await relistRun({ ...cfg, hubArgs: v.args }, names, cl, objects, v.entry));
    }
  }
} finally {
  cl.forEach((c) => c.close());
}
const report: Record<string, unknown> = { objects_per_cluster: objects, clusters: names, reps };
for (const v of variants) {
  const rs = runs[v.label];
  const live = summarize(rs.map((r) => percentile(r.liveMs, 99)));
  const idle = summarize(rs.map((r) => percentile(r.idleMs, 99)));
  const ratio = summarize(rs.map((r) => percentile(r.liveMs, 99) / percentile(r.idleMs, 99)));
  report[v.label] = {
    entry: v.entry,
    args: v.args,
    live_p99_during_relist_ms: round(live.median, 1),
    idle_p99_ms: round(idle.median, 1),
    live_p99_during_relist_ratio: round(ratio.median, 2),
    runs: rs.map(rounded),
  };
  console.log(
    `${v.label} ${v.entry}: live p99 during the relist ${round(live.median, 1)} ms, idle p99 ${
      round(idle.median, 1)
    } ms, ratio ${round(ratio.median, 2)} (median of ${rs.length})`,
  );
}
await Deno.writeTextFile(values.out, JSON.stringify(report, null, 2) + "\n");
console.log(`wrote ${values.out}`);

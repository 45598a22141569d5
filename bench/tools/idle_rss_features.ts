// Idle RSS of the hub by feature: the hub on the local clusters (prod, staging, dev; default operators) with each
// optional feature off, then on one at a time, read from /proc/PID/status once /readyz answers 200 and 3 s quiet:
// VmRSS split into RssFile (the executable's and other mapped files' pages) and RssAnon (heaps, stacks). The same
// readings are the `memory` phase of `deno task bench` (bench/lib/idle_rss.ts).
//
// Usage: deno run -A bench/tools/idle_rss_features.ts [--reps 3] [--only LABEL[,LABEL]] [--entry src/cli/main.ts]
// Each figure is the median of --reps fresh processes, run as `deno task run` runs the hub (its permissions and V8
// flags), directly (no task runner in between, so the PID read is the hub's).
// Assumptions: the local clusters are up (`deno task clusters:up`); the namespace the providers read may be absent.

import { parseArgs } from "node:util";
import { idleRssByFeature, idleRssTable } from "../lib/idle_rss.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    reps: { type: "string", default: "3" },
    only: { type: "string" },
    entry: { type: "string", default: "src/cli/main.ts" },
  },
  strict: true,
});
const reps = Number(values.reps);
const rows = await idleRssByFeature({
  reps,
  only: values.only?.split(","),
  entry: values.entry,
  log: (line) => console.error(line),
});
console.log(`Deno ${Deno.version.deno}, ${values.entry}, median of ${reps}, load ${Deno.loadavg().join(" ")}\n`);
console.log(idleRssTable(rows));

// What each of the hub's modules costs to load: RSS of a bare Deno process, then after importing each layer of
// src/ in turn (cumulative, in layer order, then the lazily loaded client-node), and each npm package and layer alone
// in a fresh process.
//
// Usage: deno run --allow-all bench/tools/module_rss.ts [--out FILE]
// Every figure is the median of 3 fresh processes, each run with the hub's own V8 flags (deno.json's run task); beside
// each RSS, the milliseconds its import took (start-up cost; compare within one run only, the machine is shared).
// Assumptions: importing a module runs only its top level (src/cli/main.ts starts nothing unless it is the main module).

import { parseArgs } from "node:util";
import { runTaskV8Flags } from "../lib/hub.ts";
import { round, summarize } from "../lib/stats.ts";

const ROOT = new URL("../..", import.meta.url).pathname;

/** The npm packages the hub imports (client-node only lazily, for kubeconfigs it cannot read itself). */
const PACKAGES = ["js-yaml", "yaml", "@kubernetes/client-node"];

/** In load order: src/ layers from the bottom up, then the entry point, then the lazily loaded client-node. */
const MODULES = [
  `${ROOT}src/util/mod.ts`,
  `${ROOT}src/kube/mod.ts`,
  `${ROOT}src/queue/mod.ts`,
  `${ROOT}src/runtime/mod.ts`,
  `${ROOT}src/hub/mod.ts`,
  `${ROOT}src/operators/uuid/mod.ts`,
  `${ROOT}src/cli/main.ts`,
  "@kubernetes/client-node",
];

const REPS = 3;

/** The child's script: import `modules` in turn, printing RSS (MB) before and after each as one JSON line. */
function childScript(modules: string[]): string {
  return `
const rss = () => Deno.memoryUsage().rss / 1048576;
const out = [["(bare deno)", rss(), 0]];
for (const m of ${JSON.stringify(modules)}) {
  const t = performance.now();
  await import(m.startsWith("/") ? "file://" + m : m);
  const ms = performance.now() - t;
  await new Promise((r) => setTimeout(r, 50));
  out.push([m, rss(), ms]);
}
console.log(JSON.stringify(out));
`;
}

async function runChild(modules: string[]): Promise<[string, number, number][]> {
  const file = await Deno.makeTempFile({ dir: ROOT, prefix: ".module_rss_", suffix: ".ts" });
  try {
    await Deno.writeTextFile(file, childScript(modules));
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["run", "--allow-all", ...runTaskV8Flags(), file],
      cwd: ROOT,
      stdout: "piped",
      stderr: "piped",
    }).output();
    if (out.code !== 0) {
      throw new Error(`importing ${modules.join(", ")} failed: ${new TextDecoder().decode(out.stderr).slice(-500)}`);
    }
    const lines = new TextDecoder().decode(out.stdout).trim().split("\n");
    return JSON.parse(lines[lines.length - 1]);
  } finally {
    await Deno.remove(file).catch(() => {});
  }
}

const short = (m: string) => m.startsWith(ROOT) ? m.slice(ROOT.length) : m;

async function main(): Promise<void> {
  const { values } = parseArgs({ args: Deno.args, options: { out: { type: "string" } }, strict: true });
  const cumulative: [string, number, number][][] = [];
  for (let r = 0; r < REPS; r++) cumulative.push(await runChild(MODULES));
  const steps = ["(bare deno)", ...MODULES].map((m, i) => ({
    module: short(m),
    rss_mb: round(summarize(cumulative.map((c) => c[i][1])).median, 1),
    import_ms: round(summarize(cumulative.map((c) => c[i][2])).median, 1),
  }));
  const alone: { module: string; rss_mb: number; added_mb: number; import_ms: number }[] = [];
  for (const m of [...PACKAGES, ...MODULES.slice(0, -1)]) {
    const samples: [number, number, number][] = [];
    for (let r = 0; r < REPS; r++) {
      const res = await runChild([m]);
      samples.push([res[0][1], res[1][1], res[1][2]]);
    }
    const after = summarize(samples.map((s) => s[1])).median;
    const added = summarize(samples.map((s) => s[1] - s[0])).median;
    const ms = summarize(samples.map((s) => s[2])).median;
    alone.push({ module: short(m), rss_mb: round(after, 1), added_mb: round(added, 1), import_ms: round(ms, 1) });
  }
  console.log(`Deno ${Deno.version.deno}, V8 flags ${runTaskV8Flags().join(" ") || "(none)"}; median of ${REPS}\n`);
  console.log("| step (cumulative, one process) | RSS MB | added MB | import ms |");
  console.log("|---|---:|---:|---:|");
  steps.forEach((s, i) => {
    const added = i === 0 ? "" : `${round(s.rss_mb - steps[i - 1].rss_mb, 1)}`;
    console.log(`| ${s.module} | ${s.rss_mb} | ${added} | ${i === 0 ? "" : s.import_ms} |`);
  });
  console.log("\n| imported alone (fresh process) | RSS MB | added MB | import ms |");
  console.log("|---|---:|---:|---:|");
  for (const a of alone) console.log(`| ${a.module} | ${a.rss_mb} | ${a.added_mb} | ${a.import_ms} |`);
  if (values.out) {
    await Deno.writeTextFile(
      values.out,
      JSON.stringify({ deno: Deno.version.deno, reps: REPS, cumulative: steps, alone }, null, 2) + "\n",
    );
    console.log(`\nwrote ${values.out}`);
  }
}

if (import.meta.main) await main();

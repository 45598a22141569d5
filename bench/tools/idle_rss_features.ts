// Idle RSS of the hub by feature: the hub on the local clusters (prod, staging, dev; default operators) with each
// optional feature off, then on one at a time, read from /proc/PID/status once /readyz answers 200 and 3 s quiet:
// VmRSS split into RssFile (the executable's and other mapped files' pages) and RssAnon (heaps, stacks).
//
// Usage: deno run -A bench/tools/idle_rss_features.ts [--reps 3] [--only LABEL[,LABEL]] [--entry src/cli/main.ts]
// Each figure is the median of --reps fresh processes, run as `deno task run` runs the hub (its permissions and V8
// flags), directly (no task runner in between, so the PID read is the hub's).
// Assumptions: the local clusters are up (`deno task clusters:up`); the namespace the providers read may be absent.

import { parseArgs } from "node:util";
import { freePort } from "../../dev/support/free_port.ts";
import { round, summarize } from "../lib/stats.ts";

const ROOT = new URL("../..", import.meta.url).pathname;

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
const NS = "idle-rss-features";

/** Each variant's extra flags, given free ports. */
const VARIANTS: { label: string; args: (port: () => number) => string[] }[] = [
  { label: "off (default operators)", args: () => [] },
  { label: "--webhook-bind-address", args: (p) => ["--webhook-bind-address", `127.0.0.1:${p()}`] },
  { label: "--metrics-bind-address", args: (p) => ["--metrics-bind-address", `127.0.0.1:${p()}`] },
  { label: "--cluster-secrets", args: () => ["--cluster-secrets", NS] },
  { label: "--cluster-api", args: () => ["--cluster-api", NS] },
  { label: "--http2", args: () => ["--http2"] },
  { label: "--shard", args: () => ["--shard"] },
];

/** The run task's words before the entry point: permissions and V8 flags. */
function runTaskFlags(): string[] {
  const config = JSON.parse(Deno.readTextFileSync(`${ROOT}deno.json`));
  const words = String(config.tasks.run).split(/\s+/);
  return words.slice(2, words.indexOf("src/cli/main.ts"));
}

function memory(pid: number): { rss: number; file: number; anon: number } {
  const text = Deno.readTextFileSync(`/proc/${pid}/status`);
  const mb = (f: string) => Number(new RegExp(`^${f}:\\s+(\\d+)\\s+kB`, "m").exec(text)?.[1] ?? NaN) / 1024;
  return { rss: mb("VmRSS"), file: mb("RssFile"), anon: mb("RssAnon") };
}

async function once(extra: string[]): Promise<{ rss: number; file: number; anon: number; ready: boolean }> {
  const port = freePort();
  const args = [
    "run",
    ...runTaskFlags(),
    values.entry!,
    "--kubeconfig",
    "clusters/local.yaml",
    "--clusters",
    "prod,staging,dev",
    "--liveness",
    `http://127.0.0.1:${port}/healthz`,
    ...extra,
  ];
  const child = new Deno.Command(Deno.execPath(), { args, cwd: ROOT, stdout: "null", stderr: "piped" }).spawn();
  const stderr = child.stderr.pipeTo(new WritableStream()).catch(() => {});
  try {
    let ready = false;
    const until = Date.now() + 30_000;
    while (!ready && Date.now() < until) {
      await new Promise((r) => setTimeout(r, 200));
      ready = await fetch(`http://127.0.0.1:${port}/readyz`).then(async (r) => (await r.body?.cancel(), r.ok))
        .catch(() => false);
    }
    await new Promise((r) => setTimeout(r, 3000));
    return { ...memory(child.pid), ready };
  } finally {
    child.kill("SIGTERM");
    await child.status;
    await stderr;
  }
}

const only = values.only?.split(",");
const rows: { label: string; rss: number; file: number; anon: number; ready: boolean }[] = [];
for (const v of VARIANTS.filter((v) => !only || only.includes(v.label))) {
  const samples: Awaited<ReturnType<typeof once>>[] = [];
  for (let r = 0; r < reps; r++) samples.push(await once(v.args(freePort)));
  const m = (k: "rss" | "file" | "anon") => round(summarize(samples.map((s) => s[k])).median, 1);
  rows.push({ label: v.label, rss: m("rss"), file: m("file"), anon: m("anon"), ready: samples.every((s) => s.ready) });
  console.error(`${v.label}: ${JSON.stringify(samples.map((s) => round(s.rss, 1)))}`);
}
console.log(`Deno ${Deno.version.deno}, ${values.entry}, median of ${reps}, load ${Deno.loadavg().join(" ")}\n`);
console.log("| feature (default operators, 3 clusters, idle) | RSS MB | file-backed MB | anonymous MB | ready |");
console.log("|---|---:|---:|---:|---|");
for (const r of rows) console.log(`| ${r.label} | ${r.rss} | ${r.file} | ${r.anon} | ${r.ready ? "yes" : "no"} |`);

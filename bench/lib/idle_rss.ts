// Idle RSS of the hub by feature, shared by bench/tools/idle_rss_features.ts and the bench's `memory` phase: the hub on
// the local clusters with each optional feature off, then on one at a time, read from /proc/PID/status once /readyz
// answers 200 and 3 s quiet: VmRSS split into RssFile (the executable's and other mapped files' pages) and RssAnon
// (heaps, stacks).
//
// Assumptions: the local clusters are up (`deno task clusters:up`); the namespace the providers read may be absent.
// The Cluster API variant installs Cluster API's `Cluster` CRD where it is not served (and leaves it, as the tests do):
// without it that provider never reports ready.
// Each process is run as `deno task run` runs the hub (its permissions and V8 flags), directly (no task runner in
// between, so the PID read is the hub's).

import { installClusterApiCrd } from "../../dev/support/cluster_api_crd.ts";
import { freePort } from "../../dev/support/free_port.ts";
import { json } from "./report.ts";
import { round, summarize, type Summary } from "./stats.ts";

const ROOT = new URL("../..", import.meta.url).pathname;
const PROVIDER_NS = "idle-rss-features";

/** One idle reading of a process, in MB (NaN for a field the status file lacks). */
export interface RssReading {
  rss: number;
  file: number;
  anon: number;
}

/** One variant's readings over fresh processes: median, min and max of each field. */
export interface IdleRssRow {
  label: string;
  rss: Summary;
  file: Summary;
  anon: Summary;
  /** Every process answered /readyz 200 before it was read. */
  ready: boolean;
}

/** An optional feature: its label and its extra flags, given a source of free ports. */
export interface IdleRssVariant {
  label: string;
  args: (port: () => number) => string[];
}

/** The baseline (default operators, no optional flag) first, then each optional feature alone. */
export const IDLE_RSS_VARIANTS: readonly IdleRssVariant[] = [
  { label: "off (default operators)", args: () => [] },
  { label: "--webhook-bind-address", args: (p) => ["--webhook-bind-address", `127.0.0.1:${p()}`] },
  { label: "--metrics-bind-address", args: (p) => ["--metrics-bind-address", `127.0.0.1:${p()}`] },
  { label: "--cluster-secrets", args: () => ["--cluster-secrets", PROVIDER_NS] },
  { label: "--cluster-api", args: () => ["--cluster-api", PROVIDER_NS] },
  { label: "--http2", args: () => ["--http2"] },
  { label: "--shard", args: () => ["--shard"] },
];

/** One `NAME:  N kB` field of a /proc/PID/status text (VmRSS, RssFile, VmHWM, ...) in MB; NaN when it is absent. */
export function procStatusMb(text: string, field: string): number {
  return Number(new RegExp(`^${field}:\\s+(\\d+)\\s+kB`, "m").exec(text)?.[1] ?? NaN) / 1024;
}

/** VmRSS, RssFile and RssAnon of a /proc/PID/status text, in MB; NaN for a field that is absent. */
export function parseProcStatus(text: string): RssReading {
  const mb = (f: string) => procStatusMb(text, f);
  return { rss: mb("VmRSS"), file: mb("RssFile"), anon: mb("RssAnon") };
}

/** One variant's row from its readings: the median (with min and max) of each field over the processes. */
export function idleRssRow(label: string, samples: (RssReading & { ready: boolean })[]): IdleRssRow {
  return {
    label,
    rss: summarize(samples.map((s) => s.rss)),
    file: summarize(samples.map((s) => s.file)),
    anon: summarize(samples.map((s) => s.anon)),
    ready: samples.length > 0 && samples.every((s) => s.ready),
  };
}

/** The rows as a Markdown table of medians, MB to one decimal. */
export function idleRssTable(rows: IdleRssRow[]): string {
  const lines = [
    "| feature (default operators, 3 clusters, idle) | RSS MB | file-backed MB | anonymous MB | ready |",
    "|---|---:|---:|---:|---|",
  ];
  const m = (s: Summary) => round(s.median, 1);
  for (const r of rows) {
    lines.push(`| ${r.label} | ${m(r.rss)} | ${m(r.file)} | ${m(r.anon)} | ${r.ready ? "yes" : "no"} |`);
  }
  return lines.join("\n");
}

/** The run task's words before the entry point: permissions and V8 flags. */
function runTaskFlags(): string[] {
  const config = JSON.parse(Deno.readTextFileSync(`${ROOT}deno.json`));
  const words = String(config.tasks.run).split(/\s+/);
  return words.slice(2, words.indexOf("src/cli/main.ts"));
}

/** One fresh hub with `extra` flags: its RSS 3 s after /readyz first answers 200 (or after 30 s without). */
export async function idleRssOnce(
  extra: string[],
  opts: { entry?: string; clusters?: string[] } = {},
): Promise<RssReading & { ready: boolean }> {
  const port = freePort();
  const args = [
    "run",
    ...runTaskFlags(),
    opts.entry ?? "src/cli/main.ts",
    "--kubeconfig",
    "clusters/local.yaml",
    "--clusters",
    (opts.clusters ?? ["prod", "staging", "dev"]).join(","),
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
    return { ...parseProcStatus(Deno.readTextFileSync(`/proc/${child.pid}/status`)), ready };
  } finally {
    child.kill("SIGTERM");
    await child.status;
    await stderr;
  }
}

/**
 * Each variant (all, or those labelled in `only`) over `reps` fresh processes, one variant after the other, each with
 * `args` before its own flags; `log` hears each variant's RSS samples.
 */
export async function idleRssByFeature(opts: {
  reps: number;
  only?: string[];
  entry?: string;
  clusters?: string[];
  args?: string[];
  log?: (line: string) => void;
}): Promise<IdleRssRow[]> {
  const rows: IdleRssRow[] = [];
  const variants = IDLE_RSS_VARIANTS.filter((v) => !opts.only || opts.only.includes(v.label));
  if (variants.some((v) => v.label === "--cluster-api")) {
    await Promise.all((opts.clusters ?? ["prod", "staging", "dev"]).map((c) => installClusterApiCrd(c)));
  }
  for (const v of variants) {
    const samples: (RssReading & { ready: boolean })[] = [];
    for (let r = 0; r < opts.reps; r++) {
      samples.push(
        await idleRssOnce([...opts.args ?? [], ...v.args(freePort)], { entry: opts.entry, clusters: opts.clusters }),
      );
    }
    opts.log?.(`${v.label}: RSS ${JSON.stringify(samples.map((s) => round(s.rss, 1)))} MB`);
    rows.push(idleRssRow(v.label, samples));
  }
  return rows;
}

/** The idle figures for bench/last.json: the first row (the baseline) as `idle_rss_*_mb`, every row in the table. */
export function idleRssJson(byFeature: IdleRssRow[]): Record<string, unknown> {
  if (byFeature.length === 0) throw new Error("memory phase: no idle RSS rows to report (no variant ran)");
  const [base] = byFeature;
  return {
    idle_rss_mb: json(base.rss, 1),
    idle_rss_file_mb: json(base.file, 1),
    idle_rss_anon_mb: json(base.anon, 1),
    idle_rss_by_feature: byFeature.map((r) => ({
      feature: r.label,
      rss_mb: json(r.rss, 1),
      rss_file_mb: json(r.file, 1),
      rss_anon_mb: json(r.anon, 1),
      ready: r.ready,
    })),
  };
}

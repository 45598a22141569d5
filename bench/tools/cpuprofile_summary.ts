// Summarises a V8 .cpuprofile (from `deno run --cpu-prof`): where the non-idle time goes, by runtime
// area and by the project's own functions, excluding module loading.
//
// Usage:
//   deno task bench --phases throughput --reps 1 --hub-deno-flag=--cpu-prof --hub-deno-flag=--cpu-prof-dir=/tmp/prof
//   deno run --allow-read bench/tools/cpuprofile_summary.ts /tmp/prof/<file>.cpuprofile [units, e.g. 3000 objects]
//     [--from-s S] [--to-s S]   only the samples taken S seconds after the profile started (an idle window)

import { parseArgs } from "node:util";

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
}

/** Which samples count, in seconds from the profile's start. */
interface Window {
  fromS: number;
  toS: number;
}

/** Runtime areas, matched on the leaf frame's URL and function name. First match wins. */
const AREAS: [RegExp, string][] = [
  [/deno_fetch\/2[0-6]_|^op_fetch|98_global_scope_shared/, "fetch: building and sending requests"],
  [/22_body|op_read_all|23_response/, "fetch: reading response bodies"],
  [/06_streams|op_read$/, "web streams (watch bodies)"],
  [/02_timers|internal\/timers|deno_node\/timers|op_timer/, "timers"],
  [/02_event|03_abort_signal/, "events and AbortSignals"],
  [/00_infra|01_core|00_primordials/, "promises and op dispatch"],
  [/00_url/, "URL parsing"],
  [/webidl/, "WebIDL conversions"],
  [/text_encoding|op_encode|op_decode/, "text encoding"],
  [/_ndjson/, "watch lines (JSON.parse)"],
  [/\/src\//, "own code (src/)"],
];

function summarize(file: string, units: number, window: Window = { fromS: 0, toS: Infinity }): string {
  const prof = JSON.parse(Deno.readTextFileSync(file)) as Profile;
  const nodes = new Map(prof.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of prof.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const areas = new Map<string, number>();
  const own = new Map<string, number>();
  const otherLeaves = new Map<string, number>();
  let total = 0, loading = 0, at = prof.startTime;
  for (let i = 0; i < prof.samples.length; i++) {
    const id = prof.samples[i];
    const t = prof.timeDeltas[i] ?? 0;
    at += t;
    if (at < prof.startTime + window.fromS * 1e6 || at > prof.startTime + window.toS * 1e6) continue;
    const leaf = nodes.get(id)!.callFrame;
    if (leaf.functionName === "(idle)") continue;
    let isLoading = false;
    let owner: string | undefined;
    for (let p: number | undefined = id; p !== undefined; p = parent.get(p)) {
      const cf = nodes.get(p)!.callFrame;
      if (/^(compileFunction|evaluate)$|op_require|loadMaybeCjs|Module\._load/.test(cf.functionName)) isLoading = true;
      if (!owner && cf.url.includes("/src/")) {
        owner = `${cf.functionName || "(anonymous)"} ${cf.url.replace(/^.*\/src\//, "src/")}:${cf.lineNumber + 1}`;
      }
    }
    total += t;
    if (isLoading) {
      loading += t;
      continue;
    }
    const area = leaf.functionName === "(program)"
      ? "native code outside JS"
      : leaf.functionName === "(garbage collector)"
      ? "garbage collector"
      : AREAS.find(([re]) => re.test(leaf.url) || re.test(leaf.functionName))?.[1] ?? "other";
    areas.set(area, (areas.get(area) ?? 0) + t);
    if (area === "other") {
      const where = `${leaf.functionName || "(anonymous)"} ${leaf.url.replace(/^.*\/(ext|node_modules|src)\//, "$1/")}`;
      otherLeaves.set(where, (otherLeaves.get(where) ?? 0) + t);
    }
    if (owner) own.set(owner, (own.get(owner) ?? 0) + t);
  }
  const busy = total - loading;
  const per = (us: number) => units > 1 ? `${(us / units).toFixed(0).padStart(6)} µs/unit` : "";
  const pct = (us: number) => `${(100 * us / busy).toFixed(1).padStart(5)}%`;
  const span = Number.isFinite(window.toS) ? `, ${window.fromS}–${window.toS} s after its start` : "";
  const share = Number.isFinite(window.toS)
    ? ` (${(total / 1e4 / (window.toS - window.fromS)).toFixed(3)} % of a core)`
    : "";
  const lines = [
    `${file}${span}: ${(total / 1000).toFixed(0)} ms non-idle${share}, of which ${
      (loading / 1000).toFixed(0)
    } ms module loading`,
    "",
    "by runtime area (leaf frame):",
    ...[...areas].sort((a, b) => b[1] - a[1]).map(([k, t]) => `${pct(t)} ${per(t)}  ${k}`),
    "",
    "by innermost own function (src/, callees included):",
    ...[...own].sort((a, b) => b[1] - a[1]).slice(0, 15).map(([k, t]) => `${pct(t)} ${per(t)}  ${k}`),
    "",
    'largest leaf frames in "other":',
    ...[...otherLeaves].sort((a, b) => b[1] - a[1]).slice(0, 12).map(([k, t]) => `${pct(t)} ${per(t)}  ${k}`),
  ];
  return lines.join("\n");
}

if (import.meta.main) {
  const { values, positionals } = parseArgs({
    args: Deno.args,
    options: { "from-s": { type: "string", default: "0" }, "to-s": { type: "string" } },
    allowPositionals: true,
  });
  const window = {
    fromS: Number(values["from-s"]),
    toS: values["to-s"] === undefined ? Infinity : Number(values["to-s"]),
  };
  if (!positionals[0] || !(window.fromS >= 0) || !(window.toS > window.fromS)) {
    console.error(
      "usage: deno run --allow-read bench/tools/cpuprofile_summary.ts FILE.cpuprofile [units] [--from-s S] [--to-s S]",
    );
    Deno.exit(2);
  }
  console.log(summarize(positionals[0], Number(positionals[1] ?? 1), window));
}

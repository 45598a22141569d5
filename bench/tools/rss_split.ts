// Where an idle operator's resident memory is: the hub (default operators, and `--operators uuid`), the kube-rs peer
// and the controller-runtime peer, each started on the local clusters watching one empty namespace, read from
// /proc/PID/status once synced and 3 s quiet: RssFile (pages of the executable and other mapped files), RssAnon
// (heaps, stacks) and VmHWM. Medians of --reps fresh processes each.
//
// `deno run -A bench/tools/rss_split.ts [--reps 3] [--json] [--hub-entry .cache/bench-head/src/cli/main.ts]` (builds both peers first when needed; a peer that does not
// build is left out and said so).

import { parseArgs } from "node:util";
import { BenchCluster } from "../lib/cluster.ts";
import { parseConfig } from "../lib/config.ts";
import { sleep } from "../lib/hub.ts";
import { parseProcStatus, procStatusMb } from "../lib/idle_rss.ts";
import { buildPeer } from "../lib/peer.ts";
import { buildGoPeer } from "../lib/peer_go.ts";
import { log, type OperatorKind, startOperator, withNamespace } from "../lib/run.ts";
import { round, summarize } from "../lib/stats.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: { reps: { type: "string", default: "3" }, json: { type: "boolean" }, "hub-entry": { type: "string" } },
});
const reps = Number(values.reps);
const cfg = parseConfig(values["hub-entry"] ? ["--hub-entry", values["hub-entry"]] : []);
const names = ["prod", "staging", "dev"];
const cl = names.map((n) => new BenchCluster(n));
await Promise.all(cl.map((c) => c.detect()));
const [kube, go] = [await buildPeer(log), await buildGoPeer(log)];
const variants: { label: string; kind: OperatorKind; bin?: string; args?: string[] }[] = [
  { label: "hub (default operators)", kind: "hub" },
  { label: "hub (--operators uuid)", kind: "hub", args: ["--operators", "uuid"] },
  ...(kube.ok ? [{ label: "kube-rs peer", kind: "peer" as const, bin: kube.binary }] : []),
  ...(go.ok ? [{ label: "controller-runtime peer", kind: "go_peer" as const, bin: go.binary }] : []),
];
if (!kube.ok) log(`kube-rs peer left out: ${kube.error}`);
if (!go.ok) log(`controller-runtime peer left out: ${go.error}`);

const fields = (pid: number) => {
  const text = Deno.readTextFileSync(`/proc/${pid}/status`);
  return { ...parseProcStatus(text), peak: procStatusMb(text, "VmHWM") };
};
const out: Record<string, Record<string, number>> = {};
try {
  await withNamespace(cl, "rss-split", async (ns) => {
    const samples = new Map<string, ReturnType<typeof fields>[]>();
    for (let r = 0; r < reps; r++) {
      for (const v of variants) {
        const op = startOperator(v.kind, cfg, names, ns, v.bin, cl[0].statusSubresource, { args: v.args });
        try {
          await op.waitReady();
          await sleep(3000);
          const pid = (op as unknown as { pid: number }).pid;
          const f = fields(pid);
          samples.set(v.label, [...(samples.get(v.label) ?? []), f]);
          log(`${v.label}: RSS ${round(f.rss, 1)} MB (file ${round(f.file, 1)}, anon ${round(f.anon, 1)})`);
        } finally {
          await op.stop();
        }
      }
    }
    for (const [label, s] of samples) {
      const m = (k: keyof ReturnType<typeof fields>) => round(summarize(s.map((x) => x[k])).median, 1);
      out[label] = { rss_mb: m("rss"), rss_file_mb: m("file"), rss_anon_mb: m("anon"), peak_mb: m("peak") };
    }
  });
} finally {
  cl.forEach((c) => c.close());
}
if (values.json) console.log(JSON.stringify({ reps, load_average: Deno.loadavg(), idle: out }, null, 2));
else {
  console.log("| operator, idle on one empty namespace of 3 clusters | RSS MB | file-backed MB | anonymous MB |");
  console.log("|---|---:|---:|---:|");
  for (const [label, f] of Object.entries(out)) {
    console.log(`| ${label} | ${f.rss_mb} | ${f.rss_file_mb} | ${f.rss_anon_mb} |`);
  }
}

// A/B of the clusters phase's start-up: `deno run -A bench/tools/clusters_ab.ts --n 1000 [--a ENTRY --b ENTRY]`.
//
// Runs the hub on N namespaced tenant contexts (bench/lib/tenants.ts, as `--phases clusters` does), alternating the
// variants, and per run reports: spawn → /readyz 200, the hub's CPU until then, the three API servers' CPU over the
// same span, the requests they served (their own `apiserver_request_total`, by verb and resource, per cluster), the
// watches they hold (`apiserver_longrunning_requests`), the hub's open sockets, and optionally RSS and idle CPU after a
// settle. A baseline is any checkout, e.g. `git archive HEAD | tar -x -C .cache/ab-base` then
// `--a .cache/ab-base/src/cli/main.ts`. With `--peer`, the kube-rs peer (bench/peers/kube_rs, built with cargo) runs on
// the same N tenant contexts after the variants of each repetition, measured the same way from outside: ready when
// every context printed `synced`, its CPU until then, RSS after the settle and idle CPU. Needs `deno task clusters:up`.

import { parseArgs } from "node:util";
import { apiserverMetrics, requireClusters } from "../../dev/support/local_clusters.ts";
import { clustersRun, prepareTenants, settledRss } from "../phases/clusters.ts";
import { cpuMs, cpuMsByThread, cpuMsOf, cpuPctByThread } from "../lib/proc.ts";
import { buildPeer, PeerProcess } from "../lib/peer.ts";
import { type Tenant, tenantKubeconfig } from "../lib/tenants.ts";
import { load1, log } from "../lib/run.ts";

const USAGE = `Usage: deno run -A bench/tools/clusters_ab.ts [options]
  --n N              clusters (tenant contexts) per run (default 1000)
  --a ENTRY          variant A's script, relative to the repository root (default src/cli/main.ts)
  --b ENTRY          variant B's script (default: none, A only)
  --operators LIST   --operators for the hub, or "default" for the hub's default operators (default uuid)
  --a-operators LIST, --b-operators LIST
                     that variant's --operators instead (e.g. A uuid against B default)
  --a-arg ARG, --b-arg ARG
                     an extra hub argument for that variant, repeatable (e.g. --b-arg=examples/website_operator.ts)
  --reps R           runs per variant, alternating which goes first (default 1)
  --settle-s S       after ready, wait S seconds then read RSS (default 0: skip)
  --idle-s S         then measure idle CPU over S seconds (default 0: skip)
  --deno-flag FLAG   extra \`deno run\` flag for the hub, repeatable (e.g. --deno-flag=--cpu-prof)
  --a-deno-flag FLAG, --b-deno-flag FLAG
                     an extra \`deno run\` flag for that variant, repeatable
  --peer             after the variants of each repetition, run the kube-rs peer on the same tenant contexts
  --a-env K=V, --b-env K=V
                     an environment variable for that variant's hub, repeatable (e.g. the Dockerfile's
                     --b-env=LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2 --b-env=MALLOC_CONF=narenas:1,tcache:false)`;

/** The API servers' counters that matter here, summed over the three. */
interface ServerCounters {
  requests: Map<string, number>;
  watches: Map<string, number>;
}

function parseCounters(texts: string[]): ServerCounters {
  const requests = new Map<string, number>(), watches = new Map<string, number>();
  for (const text of texts) {
    for (const line of text.split("\n")) {
      const m = /^(apiserver_request_total|apiserver_longrunning_requests)\{([^}]*)\} (\S+)$/.exec(line);
      if (!m) continue;
      const labels = Object.fromEntries([...m[2].matchAll(/(\w+)="([^"]*)"/g)].map((x) => [x[1], x[2]]));
      if (m[1] === "apiserver_longrunning_requests" && labels.verb !== "WATCH") continue;
      const key = `${labels.verb} ${labels.resource}${labels.subresource ? "/" + labels.subresource : ""}` +
        (labels.group ? `.${labels.group}` : "");
      const into = m[1] === "apiserver_request_total" ? requests : watches;
      into.set(key, (into.get(key) ?? 0) + Number(m[3]));
    }
  }
  return { requests, watches };
}

async function counters(names: string[]): Promise<ServerCounters> {
  return parseCounters(await Promise.all(names.map((n) => apiserverMetrics(n))));
}

function apiserverPids(): number[] {
  const out = new TextDecoder().decode(new Deno.Command("ps", { args: ["-eo", "pid,args"] }).outputSync().stdout);
  const root = new URL("../..", import.meta.url).pathname;
  return out.split("\n").filter((l) => l.includes(`${root}.cache/kube-bin/kube-apiserver`))
    .map((l) => Number(l.trim().split(/\s+/)[0]));
}

function socketsOf(pid: number): number {
  let n = 0;
  for (const e of Deno.readDirSync(`/proc/${pid}/fd`)) {
    try {
      if (Deno.readLinkSync(`/proc/${pid}/fd/${e.name}`).startsWith("socket:")) n++;
    } catch { /* closed meanwhile */ }
  }
  return n;
}

/** `K=V` arguments as an environment (undefined for none). */
function envOf(pairs: string[]): Record<string, string> | undefined {
  if (!pairs.length) return undefined;
  const env: Record<string, string> = {};
  for (const pair of pairs) {
    const at = pair.indexOf("=");
    if (at < 1) throw new Error(`--a-env/--b-env take K=V, not "${pair}"`);
    env[pair.slice(0, at)] = pair.slice(at + 1);
  }
  return env;
}

/** The kube-rs peer on `list`'s contexts: ready, its CPU until then, RSS after `settleS`, CPU over `idleS`. */
async function peerRun(
  binary: string,
  list: Tenant[],
  settleS: number,
  idleS: number,
): Promise<Record<string, unknown>> {
  const dir = await Deno.makeTempDir({ prefix: "bench-clusters-peer-" });
  const file = `${dir}/tenants.yaml`;
  await Deno.writeTextFile(file, tenantKubeconfig(list));
  const load = load1();
  const peer = PeerProcess.startOnTenants(binary, file, list.map((t) => t.context));
  try {
    const readySeconds = await peer.waitReady(300_000);
    const startupCpuMs = peer.cpuMs();
    log(
      `clusters: kube-rs peer: ${list.length} synced in ${readySeconds.toFixed(2)} s (CPU ${
        (startupCpuMs / 1000).toFixed(2)
      } s)`,
    );
    const rssMib = settleS ? await settledRss(peer.pid, settleS * 1000, 0) : undefined;
    let idleCpuPct: number | undefined, idleCpuPctByThread: Record<string, number> | undefined;
    if (idleS) {
      const c0 = cpuMs(peer.pid), threads0 = cpuMsByThread(peer.pid), t0 = performance.now();
      await new Promise((r) => setTimeout(r, idleS * 1000));
      const ms = performance.now() - t0;
      idleCpuPct = (cpuMs(peer.pid) - c0) / ms * 100;
      idleCpuPctByThread = cpuPctByThread(threads0, cpuMsByThread(peer.pid), ms);
    }
    return {
      variant: "kube-rs peer",
      entry: binary,
      load1: load,
      readySeconds: Math.round(readySeconds * 100) / 100,
      peerStartupCpuS: Math.round(startupCpuMs / 10) / 100,
      rssMib: rssMib === undefined ? undefined : Math.round(rssMib * 10) / 10,
      idleCpuPct,
      idleCpuPctByThread,
    };
  } finally {
    await peer.stop();
    await Deno.remove(dir, { recursive: true });
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    args: Deno.args,
    options: {
      n: { type: "string", default: "1000" },
      a: { type: "string", default: "src/cli/main.ts" },
      b: { type: "string" },
      operators: { type: "string", default: "uuid" },
      "a-operators": { type: "string" },
      "b-operators": { type: "string" },
      "a-arg": { type: "string", multiple: true, default: [] },
      "b-arg": { type: "string", multiple: true, default: [] },
      reps: { type: "string", default: "1" },
      "settle-s": { type: "string", default: "0" },
      "idle-s": { type: "string", default: "0" },
      "deno-flag": { type: "string", multiple: true, default: [] },
      "a-deno-flag": { type: "string", multiple: true, default: [] },
      "b-deno-flag": { type: "string", multiple: true, default: [] },
      "a-env": { type: "string", multiple: true, default: [] },
      "b-env": { type: "string", multiple: true, default: [] },
      peer: { type: "boolean" },
      help: { type: "boolean" },
    },
  });
  if (values.help) return console.log(USAGE);
  const n = Number(values.n), reps = Number(values.reps);
  const names = requireClusters().names;
  let peerBinary: string | undefined;
  if (values.peer) {
    const built = await buildPeer(log);
    if (!built.ok) throw new Error(`--peer: the kube-rs peer cannot be built: ${built.error}`);
    peerBinary = built.binary;
  }
  const set = await prepareTenants(n, names, log);
  const all = set.list;
  try {
    const variants = [["A", values.a], ...(values.b ? [["B", values.b]] : [])] as [string, string][];
    const operatorsOf = (list: string) => list === "default" ? null : list.split(",");
    const spec = {
      A: {
        operators: operatorsOf(values["a-operators"] ?? values.operators),
        args: values["a-arg"],
        denoFlags: values["a-deno-flag"],
        env: envOf(values["a-env"]),
      },
      B: {
        operators: operatorsOf(values["b-operators"] ?? values.operators),
        args: values["b-arg"],
        denoFlags: values["b-deno-flag"],
        env: envOf(values["b-env"]),
      },
    };
    const results: Record<string, unknown[]> = {};
    for (let r = 0; r < reps; r++) {
      const order = r % 2 ? [...variants].reverse() : variants;
      for (const [label, entry] of order) {
        const pids = apiserverPids();
        const before = await counters(names);
        const server0 = cpuMsOf(pids);
        const load = load1();
        let serverMs = 0, after: ServerCounters | undefined, sockets = 0;
        let hubPid = 0;
        const run = await clustersRun(all, n, {
          entry,
          operators: spec[label as "A" | "B"].operators,
          extraArgs: spec[label as "A" | "B"].args,
          settleMs: Number(values["settle-s"]) * 1000,
          idleMs: Number(values["idle-s"]) * 1000,
          denoFlags: [...values["deno-flag"], ...spec[label as "A" | "B"].denoFlags],
          env: spec[label as "A" | "B"].env,
          log,
          onReady: async () => {
            serverMs = cpuMsOf(pids) - server0;
            after = await counters(names);
            sockets = hubPid ? socketsOf(hubPid) : 0;
          },
          onSpawn: (pid) => (hubPid = pid),
        });
        const perCluster: Record<string, number> = {};
        let total = 0;
        for (const [k, v] of after!.requests) {
          const d = v - (before.requests.get(k) ?? 0);
          if (d <= 0) continue;
          perCluster[k] = Math.round(d / n * 100) / 100;
          total += d;
        }
        const watches: Record<string, number> = {};
        for (const [k, v] of after!.watches) {
          const d = v - (before.watches.get(k) ?? 0);
          if (d > 0) watches[k] = d;
        }
        const row = {
          variant: label,
          entry,
          operators: spec[label as "A" | "B"].operators ?? "default",
          args: spec[label as "A" | "B"].args,
          env: spec[label as "A" | "B"].env,
          load1: load,
          readySeconds: Math.round(run.readySeconds * 100) / 100,
          hubStartupCpuS: Math.round(run.startupCpuMs! / 10) / 100,
          apiserversCpuS: Math.round(serverMs / 10) / 100,
          requestsPerCluster: Math.round(total / n * 100) / 100,
          requestsPerClusterByKind: perCluster,
          watchesOpened: watches,
          hubSockets: sockets,
          rssMib: values["settle-s"] !== "0" ? Math.round(run.rssMib * 10) / 10 : undefined,
          idleCpuPct: run.idleCpuPct,
          idleCpuPctByThread: run.idleCpuPctByThread,
        };
        console.log(JSON.stringify(row));
        (results[label] ??= []).push(row);
      }
      if (peerBinary) {
        const row = await peerRun(peerBinary, all.slice(0, n), Number(values["settle-s"]), Number(values["idle-s"]));
        console.log(JSON.stringify(row));
      }
    }
  } finally {
    await set.remove();
  }
}

if (import.meta.main) await main();

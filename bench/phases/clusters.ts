// `--phases clusters`: how many namespaced clusters one hub process holds, and what each idle one costs.
//
// Thousands of tenant contexts (bench/lib/tenants.ts) against the running local apiservers, the hub as a real subprocess
// (`deno task run`'s permissions, `--operators uuid`): time to ready at 1,000 and 5,000 clusters, RSS per idle cluster
// over a 3-cluster hub, idle CPU at 1,000, a Uuid's latency in cluster #1,000 while the others idle, and the floor:
// Deno's own cost of one idle TLS watch (bench/tools/idle_watches.ts).

import { HubProcess, runTaskPermissions } from "../../dev/support/hub_process.ts";
import { ClusterApi, localEndpoint, UUID_V4 } from "../../dev/support/cluster_api.ts";
import { runTaskV8Flags, sleep } from "../lib/hub.ts";
import { log } from "../lib/run.ts";
import { round, summarize } from "../lib/stats.ts";
import type { PhaseContext } from "./user_phases.ts";
import { cpuMs, cpuMsByThread, cpuPctByThread, memoryMb } from "../lib/proc.ts";
import {
  ensureTenantNamespaces,
  removeTenantNamespaces,
  type Tenant,
  tenantKubeconfig,
  tenants,
} from "../lib/tenants.ts";

/** What one hub run over `n` clusters measured. */
export interface ClustersRun {
  clusters: number;
  /** Spawn → /readyz 200 (every cluster listed, i.e. `watching`). */
  readySeconds: number;
  /** RSS after `settleMs` of idling (median of samples), MiB. */
  rssMib: number;
  /** Hub CPU over the idle window, percent of one core. */
  idleCpuPct?: number;
  /** The same window by thread name (bench/lib/proc.ts `cpuMsByThread`): main thread, V8's workers, Tokio's. */
  idleCpuPctByThread?: Record<string, number>;
  /** Create → `status.uuid` seen, for a Uuid in the last cluster while the others idle. */
  uuidLatencySeconds?: number;
  /** Hub CPU from spawn to ready (process start, kubeconfig, every cluster's engage to `watching`), ms. */
  startupCpuMs?: number;
}

export interface ClustersRunOptions {
  /** Wait this long after ready before sampling RSS. Default 15 s. */
  settleMs?: number;
  /**
   * Then wait until RSS held within 2 % for this long (V8's memory reducer runs its GCs a minute or two after the
   * start-up burst, shrinking the heap), at most 4 minutes; 0 samples at once. Default 0.
   */
  stableMs?: number;
  /** Measure idle CPU over this long (0: skip). Default 0. */
  idleMs?: number;
  /** Create a Uuid in the last cluster and time its UUID. Default false. */
  latency?: boolean;
  /** Hang guard for readiness. Default 300 s. */
  readyTimeoutMs?: number;
  /** Extra `deno run` flags (e.g. --v8-flags) for the hub. */
  denoFlags?: string[];
  /** The hub's script, relative to the repository root (an A/B baseline). Default src/cli/main.ts. */
  entry?: string;
  /** `--operators`; undefined keeps the bench's `uuid`, `null` runs the hub's default operators (no flag). */
  operators?: string[] | null;
  /** More hub arguments after `--operators` (operator files, flags). */
  extraArgs?: string[];
  /** Called once the hub is ready, before the settle wait (e.g. to read the API servers' counters). */
  onReady?: () => Promise<void>;
  /** Called with the hub's pid once it is spawned. */
  onSpawn?: (pid: number) => void;
  env?: Record<string, string>;
  log?: (line: string) => void;
}

/** Runs the hub on the first `n` tenants of `all` (their namespaces must exist) and measures it. */
export async function clustersRun(all: Tenant[], n: number, options: ClustersRunOptions = {}): Promise<ClustersRun> {
  const list = all.slice(0, n);
  const dir = await Deno.makeTempDir({ prefix: "bench-clusters-" });
  const file = `${dir}/tenants.yaml`;
  await Deno.writeTextFile(file, tenantKubeconfig(list));
  const spawnedAt = performance.now();
  const hub = HubProcess.start({
    clusters: ["all"],
    kubeconfigs: [file],
    args: [
      ...(options.operators === null ? [] : ["--operators", (options.operators ?? ["uuid"]).join(",")]),
      "--log-level",
      "warn",
      ...(options.extraArgs ?? []),
    ],
    entry: options.entry,
    permissions: [...runTaskPermissions(), ...runTaskV8Flags(options.entry), ...(options.denoFlags ?? [])],
    env: options.env,
  });
  options.onSpawn?.(hub.pid);
  try {
    const readySeconds = await waitReady(hub, spawnedAt, options.readyTimeoutMs ?? 300_000);
    const startupCpuMs = cpuMs(hub.pid);
    await options.onReady?.();
    options.log?.(
      `clusters: ${n} ready in ${readySeconds.toFixed(2)} s (hub CPU ${(startupCpuMs / 1000).toFixed(2)} s)`,
    );
    const rssMib = await settledRss(hub.pid, options.settleMs ?? 15_000, options.stableMs ?? 0);
    const out: ClustersRun = { clusters: n, readySeconds, rssMib, startupCpuMs };
    if (options.idleMs) {
      const c0 = cpuMs(hub.pid), threads0 = cpuMsByThread(hub.pid), t0 = performance.now();
      await sleep(options.idleMs);
      const ms = performance.now() - t0;
      out.idleCpuPct = (cpuMs(hub.pid) - c0) / ms * 100;
      out.idleCpuPctByThread = cpuPctByThread(threads0, cpuMsByThread(hub.pid), ms);
    }
    if (options.latency) out.uuidLatencySeconds = await uuidLatency(list[list.length - 1]);
    options.log?.(
      `clusters: ${n}: RSS ${rssMib.toFixed(1)} MiB` +
        (out.idleCpuPct !== undefined ? `, idle CPU ${out.idleCpuPct.toFixed(3)} %` : "") +
        (out.uuidLatencySeconds !== undefined ? `, Uuid in cluster #${n} ${out.uuidLatencySeconds.toFixed(3)} s` : ""),
    );
    return out;
  } finally {
    const status = await hub.stop();
    if (status.code !== 0) console.error(`warning: hub exited with ${status.code}\n${hub.tail()}`);
    await Deno.remove(dir, { recursive: true });
  }
}

/** RSS after `settleMs`, then once it held within 2 % for `stableMs` (median of 5 samples 200 ms apart), MiB. */
export async function settledRss(pid: number, settleMs: number, stableMs: number): Promise<number> {
  await sleep(settleMs);
  const window: number[] = [];
  const deadline = performance.now() + 240_000;
  while (stableMs > 0 && performance.now() < deadline) {
    window.push(memoryMb(pid).rss);
    if (window.length > stableMs / 5000) window.shift();
    if (window.length >= stableMs / 5000 && Math.max(...window) <= Math.min(...window) * 1.02) break;
    await sleep(5000);
  }
  const samples: number[] = [];
  for (let i = 0; i < 5; i++) {
    samples.push(memoryMb(pid).rss);
    await sleep(200);
  }
  return samples.sort((a, b) => a - b)[2];
}

/** Polls /readyz every 250 ms (each answer walks every cluster's health); seconds from spawn to the first 200. */
async function waitReady(hub: HubProcess, spawnedAt: number, timeoutMs: number): Promise<number> {
  while (performance.now() - spawnedAt < timeoutMs) {
    if (hub.exited) throw new Error(`hub exited with ${hub.exited.code}\n${hub.tail()}`);
    try {
      const res = await fetch(`http://127.0.0.1:${hub.port}/readyz`);
      await res.body?.cancel();
      if (res.status === 200) return (performance.now() - spawnedAt) / 1000;
    } catch { /* not listening yet */ }
    await sleep(250);
  }
  const s = await hub.get("/status").catch(() => undefined);
  // /status lists one page of clusters; its summary counts every cluster by state.
  const states: Record<string, number> = { ...s?.body?.summary?.states };
  throw new Error(`hub not ready after ${timeoutMs} ms; states ${JSON.stringify(states)}\n${hub.tail()}`);
}

/** Creates a Uuid in `t`'s namespace and polls (10 ms) until it has a UUID; seconds from the create's answer. */
async function uuidLatency(t: Tenant): Promise<number> {
  const api = new ClusterApi(localEndpoint(t.apiserver));
  const name = `latency-${crypto.randomUUID().slice(0, 8)}`;
  try {
    await api.createUuid(t.namespace, name);
    const t0 = performance.now();
    for (;;) {
      const o = await api.getUuid(t.namespace, name);
      if (typeof o.status?.uuid === "string" && UUID_V4.test(o.status.uuid)) return (performance.now() - t0) / 1000;
      if (performance.now() - t0 > 60_000) throw new Error(`Uuid ${t.namespace}/${name} got no UUID within 60 s`);
      await sleep(10);
    }
  } finally {
    await api.deleteUuid(t.namespace, name).catch(() => {});
    api.close();
  }
}

/** Tenants whose namespaces exist, and the removal of the ones this run made. */
export interface TenantSet {
  list: Tenant[];
  /** Deletes the namespaces prepareTenants made (those that existed before are someone else's and stay). */
  remove(): Promise<void>;
}

/** Makes sure `n` tenant namespaces exist on `apiservers`; returns the tenants. Call `remove()` when done. */
export async function prepareTenants(n: number, apiservers: string[], log?: (l: string) => void): Promise<TenantSet> {
  const list = tenants(n, apiservers);
  const t0 = performance.now();
  const made = await ensureTenantNamespaces(list);
  log?.(
    `clusters: ${n} tenant namespaces ready (${made.length} created in ${
      ((performance.now() - t0) / 1000).toFixed(1)
    } s)`,
  );
  return {
    list,
    remove: async () => {
      const t1 = performance.now();
      await removeTenantNamespaces(made);
      log?.(`clusters: ${made.length} tenant namespaces deleted in ${((performance.now() - t1) / 1000).toFixed(1)} s`);
    },
  };
}

/** What `bench/tools/idle_watches.ts` printed for one mode. */
interface FloorRun {
  mode: string;
  watches: number;
  rss_before_mib: number;
  rss_after_mib: number;
  deno_idle_watch_mib_per_cluster: number;
}

/** Runs the bare script in its own process (nothing of the hub loaded) and returns its JSON line. */
async function floorRun(n: number, mode: string): Promise<FloorRun> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      new URL("../tools/idle_watches.ts", import.meta.url).pathname,
      "--n",
      String(n),
      "--mode",
      mode,
      "--json",
    ],
    stdout: "piped",
    stderr: "inherit",
  }).output();
  const text = new TextDecoder().decode(out.stdout).trim();
  if (out.code !== 0) throw new Error(`bench/tools/idle_watches.ts --mode ${mode} exited with ${out.code}: ${text}`);
  return JSON.parse(text.split("\n").pop()!);
}

/**
 * The phase: a 3-cluster hub (baseline), 1,000 clusters (ready, RSS, idle CPU, a Uuid's latency in #1,000), 5,000
 * clusters (ready), and the bare script's floor at 1,000 watches, with `--operators uuid`; then the baseline and 1,000
 * clusters again with the hub's default operators (`--clusters-operators`). Writes the keys into `ctx.out`.
 * The tenant namespaces it made are deleted at the end, also when it fails.
 */
export async function clustersPhase(ctx: PhaseContext): Promise<void> {
  const [mid, big] = ctx.cfg.quick ? [300, 1000] : [1000, 5000];
  const which = ctx.cfg.clustersOperators ?? "both";
  const set = await prepareTenants(which === "default" ? mid : big, ctx.names, log);
  try {
    let uuidReady: number | undefined;
    if (which !== "default") uuidReady = await uuidOnlyClusters(ctx, set.list, mid, big);
    if (which !== "uuid") await defaultOperatorsClusters(ctx, set.list, mid, uuidReady);
  } finally {
    await set.remove();
  }
}

/** The 3-cluster baseline and `mid` clusters, settled, idle CPU measured, a Uuid's latency in the last one. */
async function baseAndMid(
  all: Tenant[],
  mid: number,
  entry: string | undefined,
  operators?: null,
): Promise<[ClustersRun, ClustersRun]> {
  // V8's memory reducer shrinks the heap one to two minutes after the start-up burst: RSS is read after it.
  const base = await clustersRun(all, 3, { log, settleMs: 30_000, stableMs: 30_000, operators, entry });
  // Idle CPU over a minute once that is over (its GCs take seconds of CPU on a busy machine, once).
  const at = await clustersRun(all, mid, {
    log,
    settleMs: 150_000,
    stableMs: 30_000,
    idleMs: 60_000,
    latency: true,
    operators,
    entry,
  });
  return [base, at];
}

/** The hub with its default operators (Uuid and Mirror): the `_default_operators` keys; returns nothing. */
async function defaultOperatorsClusters(
  ctx: PhaseContext,
  all: Tenant[],
  mid: number,
  uuidReady: number | undefined,
): Promise<void> {
  log("clusters: the hub's default operators");
  const [base, at] = await baseAndMid(all, mid, ctx.cfg.hubEntry, null);
  const perCluster = (at.rssMib - base.rssMib) / (mid - 3);
  ctx.out.clusters_1000_ready_s_default_operators = round(at.readySeconds, 2);
  ctx.out.rss_mib_per_idle_cluster_default_operators = round(perCluster, 4);
  ctx.out.idle_cpu_pct_1000_default_operators = round(at.idleCpuPct!, 3);
  ctx.out.clusters_default_operators = {
    sizes: [3, mid],
    runs: [base, at],
    uuid_latency_in_last_cluster_s: round(at.uuidLatencySeconds!, 3),
    load_average_1m: round(Deno.loadavg()[0], 2),
  };
  const one = (v: number) => summarize([v]);
  ctx.rows.push(
    {
      key: "clusters_1000_ready_s_default_operators",
      label: `clusters ready, default operators (${mid} namespaced clusters, spawn → /readyz)` +
        (uuidReady !== undefined ? `; Uuid only: ${round(uuidReady, 2)} s` : ""),
      s: one(at.readySeconds),
      unit: "s",
      target: uuidReady !== undefined ? `≤ Uuid only (${round(uuidReady, 2)})` : undefined,
      met: uuidReady !== undefined ? at.readySeconds <= uuidReady : undefined,
      digits: 2,
    },
    {
      key: "rss_mib_per_idle_cluster_default_operators",
      label: `rss_mib_per_idle_cluster_default_operators ((RSS at ${mid} − RSS at 3) / ${mid - 3})`,
      s: one(perCluster),
      unit: "MiB",
      target: "≤ 0.2",
      met: perCluster <= 0.2,
      digits: 4,
    },
    {
      key: "idle_cpu_pct_1000_default_operators",
      label: `idle_cpu_pct_1000_default_operators (hub CPU over 60 s idle, ${mid} clusters)`,
      s: one(at.idleCpuPct!),
      unit: "% core",
      target: "≤ 0.3",
      met: at.idleCpuPct! <= 0.3,
      digits: 3,
    },
  );
}

/** The `--operators uuid` part (issue 19's keys); returns the `mid` clusters' ready seconds. */
async function uuidOnlyClusters(ctx: PhaseContext, all: Tenant[], mid: number, big: number): Promise<number> {
  const [base, at1000] = await baseAndMid(all, mid, ctx.cfg.hubEntry);
  const at5000 = await clustersRun(all, big, {
    log,
    settleMs: 10_000,
    readyTimeoutMs: 600_000,
    entry: ctx.cfg.hubEntry,
  });
  const floors = [await floorRun(mid, "tls"), await floorRun(mid, "fetch")];
  for (const f of floors) log(`clusters: bare ${f.mode}: ${f.deno_idle_watch_mib_per_cluster} MiB per idle watch`);
  const perCluster = (at1000.rssMib - base.rssMib) / (mid - 3);
  const floor = Math.min(...floors.map((f) => f.deno_idle_watch_mib_per_cluster));
  ctx.out.clusters_1000_ready_s = round(at1000.readySeconds, 2);
  ctx.out.clusters_5000_ready_s = round(at5000.readySeconds, 2);
  ctx.out.rss_mib_per_idle_cluster = round(perCluster, 4);
  ctx.out.idle_cpu_pct_1000 = round(at1000.idleCpuPct!, 3);
  ctx.out.deno_idle_watch_mib_per_cluster = round(floor, 4);
  ctx.out.clusters = {
    sizes: [3, mid, big],
    runs: [base, at1000, at5000],
    uuid_latency_in_last_cluster_s: round(at1000.uuidLatencySeconds!, 3),
    floor_runs: floors,
    rss_per_idle_cluster_over_floor: round(perCluster / floor, 2),
  };
  const one = (v: number) => summarize([v]);
  ctx.rows.push(
    {
      key: "clusters_1000_ready_s",
      label: `clusters_1000_ready_s (${mid} namespaced clusters, spawn → /readyz)`,
      s: one(at1000.readySeconds),
      unit: "s",
      target: "≤ 10",
      met: at1000.readySeconds <= 10,
      digits: 2,
    },
    {
      key: "clusters_5000_ready_s",
      label: `clusters_5000_ready_s (${big} clusters all watching)`,
      s: one(at5000.readySeconds),
      unit: "s",
      target: "≤ 60",
      met: at5000.readySeconds <= 60,
      digits: 2,
    },
    {
      key: "rss_mib_per_idle_cluster",
      label: `rss_mib_per_idle_cluster ((RSS at ${mid} − RSS at 3) / ${mid - 3})`,
      s: one(perCluster),
      unit: "MiB",
      target: `≤ 0.1, or ≤ 1.5 × floor = ${round(1.5 * floor, 3)}`,
      met: perCluster <= Math.max(0.1, 1.5 * floor),
      digits: 4,
    },
    {
      key: "idle_cpu_pct_1000",
      label: `idle_cpu_pct_1000 (hub CPU over 60 s idle, ${mid} clusters)`,
      s: one(at1000.idleCpuPct!),
      unit: "% core",
      target: "≤ 0.2",
      met: at1000.idleCpuPct! <= 0.2,
      digits: 3,
    },
    {
      key: "deno_idle_watch_mib_per_cluster",
      label: `deno_idle_watch_mib_per_cluster (bare Deno.startTls watch, ${mid} of them)`,
      s: one(floor),
      unit: "MiB",
      digits: 4,
    },
    {
      key: "uuid_latency_last_cluster_s",
      label: `Uuid in cluster #${mid} → UUID while the others idle`,
      s: one(at1000.uuidLatencySeconds!),
      unit: "s",
      target: "≤ 1",
      met: at1000.uuidLatencySeconds! <= 1,
      digits: 3,
    },
  );
  return at1000.readySeconds;
}

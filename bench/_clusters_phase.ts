// `--phases clusters`: how many namespaced clusters one hub process holds, and what each idle one costs.
//
// Thousands of tenant contexts (bench/_tenants.ts) against the running local apiservers, the hub as a real subprocess
// (`deno task run`'s permissions, `--operators uuid`): time to ready at 1,000 and 5,000 clusters, RSS per idle cluster
// over a 3-cluster hub, idle CPU at 1,000, a Uuid's latency in cluster #1,000 while the others idle, and the floor:
// Deno's own cost of one idle TLS watch (bench/idle_watches.ts).

import { HubProcess, runTaskPermissions } from "../tests/support/hub_process.ts";
import { ClusterApi, localEndpoint, UUID_V4 } from "../tests/support/cluster_api.ts";
import { runTaskV8Flags, sleep } from "./_hub.ts";
import { cpuMs, memoryMb } from "./_proc.ts";
import { ensureTenantNamespaces, type Tenant, tenantKubeconfig, tenants } from "./_tenants.ts";

/** What one hub run over `n` clusters measured. */
export interface ClustersRun {
  clusters: number;
  /** Spawn → /readyz 200 (every cluster listed, i.e. `watching`). */
  readySeconds: number;
  /** RSS after `settleMs` of idling (median of samples), MiB. */
  rssMib: number;
  /** Hub CPU over the idle window, percent of one core. */
  idleCpuPct?: number;
  /** Create → `status.uuid` seen, for a Uuid in the last cluster while the others idle. */
  uuidLatencySeconds?: number;
}

export interface ClustersRunOptions {
  /** Wait this long after ready before sampling RSS. Default 15 s. */
  settleMs?: number;
  /** Measure idle CPU over this long (0: skip). Default 0. */
  idleMs?: number;
  /** Create a Uuid in the last cluster and time its UUID. Default false. */
  latency?: boolean;
  /** Hang guard for readiness. Default 300 s. */
  readyTimeoutMs?: number;
  /** Extra `deno run` flags (e.g. --v8-flags) for the hub. */
  denoFlags?: string[];
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
    args: ["--operators", "uuid", "--log-level", "warn"],
    permissions: [...runTaskPermissions(), ...runTaskV8Flags(), ...(options.denoFlags ?? [])],
    env: options.env,
  });
  try {
    const readySeconds = await waitReady(hub, spawnedAt, options.readyTimeoutMs ?? 300_000);
    options.log?.(`clusters: ${n} ready in ${readySeconds.toFixed(2)} s`);
    await sleep(options.settleMs ?? 15_000);
    const samples: number[] = [];
    for (let i = 0; i < 5; i++) {
      samples.push(memoryMb(hub.pid).rss);
      await sleep(200);
    }
    const rssMib = samples.sort((a, b) => a - b)[2];
    const out: ClustersRun = { clusters: n, readySeconds, rssMib };
    if (options.idleMs) {
      const c0 = cpuMs(hub.pid), t0 = performance.now();
      await sleep(options.idleMs);
      out.idleCpuPct = (cpuMs(hub.pid) - c0) / (performance.now() - t0) * 100;
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

/** Polls /readyz every 50 ms; seconds from spawn to the first 200. */
async function waitReady(hub: HubProcess, spawnedAt: number, timeoutMs: number): Promise<number> {
  while (performance.now() - spawnedAt < timeoutMs) {
    if (hub.exited) throw new Error(`hub exited with ${hub.exited.code}\n${hub.tail()}`);
    try {
      const res = await fetch(`http://127.0.0.1:${hub.port}/readyz`);
      await res.body?.cancel();
      if (res.status === 200) return (performance.now() - spawnedAt) / 1000;
    } catch { /* not listening yet */ }
    await sleep(50);
  }
  const s = await hub.get("/status").catch(() => undefined);
  const states: Record<string, number> = {};
  for (const c of Object.values(s?.body?.clusters ?? {}) as { state: string }[]) {
    states[c.state] = (states[c.state] ?? 0) + 1;
  }
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

/** Makes sure `n` tenant namespaces exist on `apiservers`; returns the tenants. */
export async function prepareTenants(n: number, apiservers: string[], log?: (l: string) => void): Promise<Tenant[]> {
  const list = tenants(n, apiservers);
  const t0 = performance.now();
  const made = await ensureTenantNamespaces(list);
  log?.(
    `clusters: ${n} tenant namespaces ready (${made} created in ${((performance.now() - t0) / 1000).toFixed(1)} s)`,
  );
  return list;
}

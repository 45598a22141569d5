// Hostile load: N labelled kubeconfig Secrets whose servers never answer, offered to a real hub process; its memory,
// probe and /status and /metrics sizes and times, and log bytes, before, under and after them.
//
//   deno run -A bench/tools/hostile_secrets.ts [--secrets 10000] [--concurrency 32] [--settle-seconds 30]
//     [--server closed|blackhole] [--log-level info] [--hub-entry FILE] [--register-timeout-seconds 300]
//     [--get-timeout-seconds 60] [--hub-arg=--operators=uuid ...] [--allocator glibc|image] [--memory-limit-mib 512]
//     [--out FILE]
//
// What it does, on the running local clusters (`deno task clusters:up`):
// - starts the hub (`deno task run`'s permissions) with prod from the command line (`--kubeconfig`, trusted),
//   `--clusters all --cluster-secrets NS` and an empty `--cluster-dir`, and waits until it is ready;
// - takes the baseline: RSS, /healthz and /metrics bytes, metric series, log bytes;
// - creates N Secrets labelled `sigs.k8s.io/multicluster-runtime-kubeconfig: "true"` in NS of prod (parallel POSTs),
//   each a valid kubeconfig (https, inline CA and token) whose server never answers: a closed loopback port
//   (`closed`, refused at once) or a listener that accepts and never speaks (`blackhole`);
// - while it creates them, waits for the hub to register them all, and settles, GETs /healthz every 100 ms
//   (latencies and bytes), then measures /status (3 GETs), /readyz, /metrics (bytes and series), log bytes, RSS now
//   and at peak (VmHWM of the hub's process);
// - deletes the namespace and waits for the hub to unregister them: RSS and series afterwards.
//
// Prints one JSON object (and writes it to --out). Figures: MiB, ms, bytes.

import { parseArgs } from "node:util";
import { FaultProxy, freePort, kubeconfigText, kubectl, kubectlOk, localEndpoint } from "../../dev/support/mod.ts";
import { HubProcess } from "../../dev/support/hub_process.ts";
import { localKubeClient } from "../../dev/support/local_client.ts";
import { cpuMs, memoryMb } from "../lib/proc.ts";
import { percentile, round } from "../lib/stats.ts";
import { useAllocator } from "../lib/allocator.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    secrets: { type: "string", default: "10000" },
    concurrency: { type: "string", default: "32" },
    "settle-seconds": { type: "string", default: "30" },
    "register-timeout-seconds": { type: "string", default: "300" },
    "get-timeout-seconds": { type: "string", default: "60" },
    server: { type: "string", default: "closed" },
    "log-level": { type: "string", default: "info" },
    "hub-entry": { type: "string" },
    "hub-arg": { type: "string", multiple: true },
    allocator: { type: "string", default: "glibc" },
    "memory-limit-mib": { type: "string" },
    out: { type: "string" },
  },
});
const n = Number(values.secrets);
const concurrency = Number(values.concurrency);
const settleMs = Number(values["settle-seconds"]) * 1000;
const registerTimeoutMs = Number(values["register-timeout-seconds"]) * 1000;
const getTimeoutMs = Number(values["get-timeout-seconds"]) * 1000;
if (!(n >= 1) || !(concurrency >= 1) || !(settleMs >= 0)) {
  console.error("hostile_secrets: --secrets and --concurrency must be positive, --settle-seconds not negative");
  Deno.exit(2);
}
if (values.server !== "closed" && values.server !== "blackhole") {
  console.error(`hostile_secrets: invalid --server "${values.server}": closed or blackhole`);
  Deno.exit(2);
}
const say = (line: string) => console.error(`[hostile_secrets] ${line}`);
// `image`: this command re-runs itself with the image's jemalloc and MALLOC_CONF preloaded (the hub inherits them).
const allocator = await useAllocator(values.allocator!);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const mib = (x: number) => round(x, 1);

const ns = `bench-hostile-${crypto.randomUUID().slice(0, 8)}`;
const dir = await Deno.makeTempDir({ prefix: "bench-hostile-" });
const prod = localEndpoint("prod");
await Deno.writeTextFile(
  `${dir}/hub.yaml`,
  kubeconfigText([{ name: "prod", server: prod.server, caPem: prod.caPem, user: { token: prod.token } }]),
);
await Deno.mkdir(`${dir}/empty`);
await kubectlOk("prod", ["create", "namespace", ns]);

// The servers the Secrets name: nobody listens on a closed port; a black hole accepts and never answers.
let hole: FaultProxy | undefined;
let server: string;
if (values.server === "blackhole") {
  hole = FaultProxy.start({ targetPort: Number(new URL(prod.server).port), mode: "blackhole" });
  server = `https://127.0.0.1:${hole.port}`;
} else {
  server = `https://127.0.0.1:${freePort()}`;
}

/** One GET of the hub: status, bytes, milliseconds; status 0 (and the time waited) when it gave no answer in time. */
async function timedGet(hub: HubProcess, path: string): Promise<{ status: number; bytes: number; ms: number }> {
  const t0 = performance.now();
  try {
    const res = await fetch(`http://127.0.0.1:${hub.port}${path}`, { signal: AbortSignal.timeout(getTimeoutMs) });
    const body = new Uint8Array(await res.arrayBuffer());
    return { status: res.status, bytes: body.byteLength, ms: performance.now() - t0 };
  } catch {
    return { status: 0, bytes: 0, ms: performance.now() - t0 };
  }
}

/** /metrics: bytes, series (sample lines), and the value of one registered-clusters gauge; throws without an answer. */
async function metrics(hub: HubProcess): Promise<{ bytes: number; series: number; secretClusters: number }> {
  const res = await fetch(`http://127.0.0.1:${hub.port}/metrics`, { signal: AbortSignal.timeout(getTimeoutMs) });
  const text = await res.text();
  const lines = text.split("\n").filter((l) => l !== "" && !l.startsWith("#"));
  const m = /^hub_clusters_registered\{provider="secret"\} (\d+)/m.exec(text);
  return {
    bytes: new TextEncoder().encode(text).byteLength,
    series: lines.length,
    secretClusters: Number(m?.[1] ?? 0),
  };
}

const logBytes = (hub: HubProcess) => hub.logs.reduce((s, l) => s + l.length + 1, 0);

/**
 * Polls /metrics until `check` holds for the secret clusters registered; the seconds it took, or NaN when it did not
 * hold within --register-timeout-seconds (a hub that no longer answers /metrics: the run goes on and says so).
 */
async function waitRegistered(hub: HubProcess, check: (n: number) => boolean, what: string): Promise<number> {
  const t0 = performance.now();
  while (true) {
    if (hub.exited) throw new Error(`hub exited with ${hub.exited.code} while waiting for ${what}\n${hub.tail()}`);
    const m = await metrics(hub).catch(() => undefined);
    if (m && check(m.secretClusters)) return (performance.now() - t0) / 1000;
    if (performance.now() - t0 > registerTimeoutMs) {
      say(`${what}: not seen within ${registerTimeoutMs / 1000} s`);
      return NaN;
    }
    await sleep(2000);
  }
}

/** Creates the Secrets, `concurrency` POSTs at a time. */
async function createSecrets(): Promise<number> {
  const admin = await localKubeClient("prod");
  const t0 = performance.now();
  try {
    let next = 0;
    const worker = async () => {
      while (next < n) {
        const i = next++;
        const name = `hostile-${i}`;
        const text = kubeconfigText([{ name, server, caPem: prod.caPem, user: { token: crypto.randomUUID() } }]);
        await admin.request("POST", `/api/v1/namespaces/${ns}/secrets`, {
          body: {
            apiVersion: "v1",
            kind: "Secret",
            metadata: { name, namespace: ns, labels: { "sigs.k8s.io/multicluster-runtime-kubeconfig": "true" } },
            data: { kubeconfig: btoa(text) },
          },
        });
      }
    };
    await Promise.all(Array.from({ length: concurrency }, worker));
  } finally {
    admin.close();
  }
  return (performance.now() - t0) / 1000;
}

// `--memory-limit-mib`: the hub runs in a memory cgroup (v1) with that limit and DENO_USE_CGROUPS=1, as the image runs
// in a pod's container. This process joins the cgroup just long enough to spawn the hub (a child starts in its
// parent's cgroup), so everything the hub touches is charged there; the kernel's own peak (memory.max_usage_in_bytes)
// and failures (memory.failcnt, an OOM kill) are reported.
const cgroup = values["memory-limit-mib"] ? `/sys/fs/cgroup/memory/bench-hostile-${ns.slice(-8)}` : undefined;
if (cgroup) {
  await Deno.mkdir(cgroup);
  await Deno.writeTextFile(`${cgroup}/memory.limit_in_bytes`, String(Number(values["memory-limit-mib"]) * 1048576));
  await Deno.writeTextFile(`${cgroup}/cgroup.procs`, String(Deno.pid));
}
const hub = HubProcess.start({
  clusters: ["all"],
  kubeconfigs: [`${dir}/hub.yaml`],
  entry: values["hub-entry"],
  env: cgroup ? { DENO_USE_CGROUPS: "1" } : undefined,
  args: [
    "--cluster-secrets",
    ns,
    "--cluster-dir",
    `${dir}/empty`,
    "--log-level",
    values["log-level"]!,
    ...values["hub-arg"] ?? [],
  ],
});
if (cgroup) await Deno.writeTextFile("/sys/fs/cgroup/memory/cgroup.procs", String(Deno.pid));
const cgroupPeak = async () =>
  cgroup
    ? {
      limit_mib: Number(values["memory-limit-mib"]),
      max_usage_mib: mib(Number(await Deno.readTextFile(`${cgroup}/memory.max_usage_in_bytes`)) / 1048576),
      failcnt: Number(await Deno.readTextFile(`${cgroup}/memory.failcnt`)),
      oom_killed: hub.exited?.signal === "SIGKILL",
    }
    : undefined;
const results: Record<string, unknown> = {
  started_at: new Date().toISOString(),
  command: `deno run -A bench/tools/hostile_secrets.ts ${Deno.args.join(" ")}`.trim(),
  secrets: n,
  server: values.server,
  log_level: values["log-level"],
  hub_args: values["hub-arg"] ?? [],
  allocator,
};
try {
  await hub.waitReady(120_000);
  await sleep(5000);
  const base = { rss: memoryMb(hub.pid).rss, ...await metrics(hub), logs: logBytes(hub) };
  const baseHealthz = await timedGet(hub, "/healthz");
  say(`baseline: RSS ${mib(base.rss)} MiB, /metrics ${base.bytes} B, ${base.series} series, logs ${base.logs} B`);

  // /healthz every 100 ms from the first Secret until the end of the settle period.
  const probes: { ms: number; bytes: number; status: number }[] = [];
  let probing = true;
  const prober = (async () => {
    while (probing) {
      probes.push(await timedGet(hub, "/healthz").catch(() => ({ status: 0, bytes: 0, ms: NaN })));
      await sleep(100);
    }
  })();
  let rssMax = 0;
  const rssTimer = setInterval(() => (rssMax = Math.max(rssMax, memoryMb(hub.pid).rss)), 500);
  const cpu0 = cpuMs(hub.pid);
  const t0 = performance.now();
  const [createSeconds, registeredSeconds] = await Promise.all([
    createSecrets(),
    waitRegistered(hub, (c) => c >= n, `${n} Secrets registered`),
  ]);
  say(`created ${n} Secrets in ${round(createSeconds, 1)} s; all registered ${round(registeredSeconds, 1)} s after`);
  await sleep(settleMs);
  probing = false;
  await prober;
  const loadedSeconds = (performance.now() - t0) / 1000;
  const cpu = cpuMs(hub.pid) - cpu0;
  const status = [];
  for (let i = 0; i < 3; i++) status.push(await timedGet(hub, "/status"));
  const readyz = await timedGet(hub, "/readyz");
  const healthz = await timedGet(hub, "/healthz");
  const m = await metrics(hub).catch(() => ({ bytes: NaN, series: NaN, secretClusters: NaN }));
  const loaded = { ...m, logs: logBytes(hub), mem: memoryMb(hub.pid) };
  clearInterval(rssTimer);
  const lat = probes.map((p) => p.ms);
  results.baseline = {
    rss_mib: mib(base.rss),
    healthz_bytes: baseHealthz.bytes,
    metrics_bytes: base.bytes,
    metrics_series: base.series,
    log_bytes: base.logs,
  };
  results.loaded = {
    create_seconds: round(createSeconds, 1),
    registered_seconds: round(registeredSeconds, 1),
    settle_seconds: settleMs / 1000,
    hub_cpu_seconds: round(cpu / 1000, 1),
    hub_cpu_pct: round(cpu / 10 / loadedSeconds, 1),
    rss_mib: mib(loaded.mem.rss),
    rss_max_sampled_mib: mib(rssMax),
    peak_rss_mib: mib(loaded.mem.peak),
    healthz: {
      requests: probes.length,
      // No answer within --get-timeout-seconds, or an answer other than 200/503.
      failed: probes.filter((p) => p.status !== 200 && p.status !== 503).length,
      p50_ms: round(percentile(lat, 50), 1),
      p99_ms: round(percentile(lat, 99), 1),
      max_ms: round(Math.max(...lat.filter(Number.isFinite)), 1),
      bytes: healthz.bytes,
      status: healthz.status,
    },
    readyz: { bytes: readyz.bytes, status: readyz.status, ms: round(readyz.ms, 1) },
    status: {
      bytes: status.map((s) => s.bytes).sort((a, b) => a - b)[1],
      ms_median: round(status.map((s) => s.ms).sort((a, b) => a - b)[1], 1),
      ms_max: round(Math.max(...status.map((s) => s.ms)), 1),
    },
    metrics_bytes: loaded.bytes,
    metrics_series: loaded.series,
    log_bytes_added: loaded.logs - base.logs,
    log_lines: hub.logs.length,
  };
  say(`loaded: ${JSON.stringify(results.loaded)}`);

  // Cleanup as a user does it: the namespace goes, every cluster with it.
  await kubectl("prod", ["delete", "namespace", ns, "--wait=false"]);
  const goneSeconds = await waitRegistered(hub, (c) => c === 0, "every Secret unregistered");
  await sleep(10_000);
  const after = {
    mem: memoryMb(hub.pid),
    ...await metrics(hub).catch(() => ({ bytes: NaN, series: NaN, secretClusters: NaN })),
  };
  results.after_delete = {
    unregistered_seconds: round(goneSeconds, 1),
    rss_mib: mib(after.mem.rss),
    // VmHWM over the whole run: the deletion of every cluster at once can peak higher than their arrival.
    peak_rss_mib: mib(after.mem.peak),
    metrics_series: after.series,
  };
  results.cgroup = await cgroupPeak();
  say(`after delete: ${JSON.stringify(results.after_delete)}; cgroup ${JSON.stringify(results.cgroup)}`);
  // The flat keys, for comparing runs.
  const l = results.loaded as Record<string, unknown> & { healthz: { p99_ms: number; bytes: number } };
  Object.assign(results, {
    hostile_secrets_peak_rss_mib: l.peak_rss_mib,
    hostile_secrets_healthz_p99_ms: l.healthz.p99_ms,
    hostile_secrets_healthz_bytes: l.healthz.bytes,
    hostile_secrets_status_ms: (l.status as { ms_median: number }).ms_median,
    hostile_secrets_status_bytes: (l.status as { bytes: number }).bytes,
    hostile_secrets_metrics_bytes: l.metrics_bytes,
    hostile_secrets_metrics_series: l.metrics_series,
    hostile_secrets_log_bytes: l.log_bytes_added,
  });
} finally {
  // A hub that ignores SIGTERM for 30 s is killed (the run still reports what it measured).
  const stopped = hub.stop();
  if (await Promise.race([stopped.then(() => true), sleep(30_000).then(() => false)]) === false) await hub.kill();
  await hole?.close();
  if (cgroup) {
    results.cgroup ??= await cgroupPeak().catch(() => undefined);
    await Deno.remove(cgroup).catch(() => {});
  }
  await kubectl("prod", ["delete", "namespace", ns, "--wait=false"]);
  await Deno.remove(dir, { recursive: true }).catch(() => {});
}
console.log(JSON.stringify(results, null, 2));
if (values.out) await Deno.writeTextFile(values.out, JSON.stringify(results, null, 2) + "\n");

// /healthz while a hostile kubeconfig is offered through a labelled Secret to a real hub (`--cluster-secrets NS`) on
// the local prod cluster: p50, p99 and max of /healthz (probed every 50 ms from a worker thread) from the Secret's
// creation until it is judged (or --cap-s), how long it took to be judged and what /status says of it, the hub's RSS
// peak, whether prod still serves a new Uuid, and how long the hub takes to exit on SIGTERM. One fresh hub per shape.
//
// Usage: deno run -A bench/tools/hostile_secret_healthz.ts [--shapes anchors:1040000,alias-bomb:1040000,contexts:5000]
//          [--cap-s 90] [--clusters all] [--root DIR] [--warm]
// --root runs the hub of the tree at DIR (e.g. `git archive HEAD | tar -x -C /tmp/old` for the code before a change);
// --clusters is the hub's --clusters (`all` parses every Secret; a list without the Secret's name leaves it unselected);
// --warm first offers a small broken kubeconfig and waits for its refusal, so the parser's worker has started before
// the measured Secret arrives (its start is then not counted).
// Assumptions: the local clusters are up (`deno task clusters:up`); traffic stays on loopback.

import { parseArgs } from "node:util";
import { localApi, localEndpoint, waitAllAssigned } from "../../dev/support/cluster_api.ts";
import { hostileKubeconfig, type HostileShape } from "../../dev/support/hostile_kubeconfig.ts";
import { freePort, runTaskPermissions } from "../../dev/support/hub_process.ts";
import { kubeconfigText } from "../../dev/support/kubeconfig_text.ts";
import { requireClusters } from "../../dev/support/local_clusters.ts";
import { testNamespace } from "../../dev/support/namespace.ts";
import { memoryMb } from "../lib/proc.ts";
import { percentile, round } from "../lib/stats.ts";

const LABEL = "sigs.k8s.io/multicluster-runtime-kubeconfig";

/** Probes `url` every `everyMs` from its own thread; each answer's latency (a timeout counts as its full wait). */
const PROBER = `
let stopped = false;
self.onmessage = (e) => { if (e.data === "stop") stopped = true; else run(e.data); };
async function run({ url, everyMs, timeoutMs }) {
  while (!stopped) {
    const t0 = performance.now();
    let ok = false;
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
      await res.body?.cancel();
      ok = res.status === 200;
    } catch { /* counted as its wait */ }
    self.postMessage({ ms: performance.now() - t0, ok });
    await new Promise((r) => setTimeout(r, everyMs));
  }
  self.postMessage("stopped");
}
`;

class Prober {
  readonly samples: number[] = [];
  failed = 0;
  #started = performance.now();
  #lastAnswer = performance.now();
  readonly #worker: Worker;
  readonly #stopped: Promise<void>;

  constructor(url: string) {
    const src = URL.createObjectURL(new Blob([PROBER], { type: "application/javascript" }));
    this.#worker = new Worker(src, { type: "module" });
    this.#stopped = new Promise((resolve) => {
      this.#worker.onmessage = (e) => {
        if (e.data === "stopped") return resolve();
        this.samples.push(e.data.ms);
        this.#lastAnswer = performance.now();
        if (!e.data.ok) this.failed++;
      };
    });
    this.#worker.postMessage({ url, everyMs: 50, timeoutMs: 120_000 });
  }

  /** Stops probing; a probe still waiting counts with the time it has waited so far. */
  async stop(): Promise<void> {
    const pending = performance.now() - this.#lastAnswer;
    this.#worker.postMessage("stop");
    await Promise.race([this.#stopped, new Promise((r) => setTimeout(r, 200))]);
    this.#worker.terminate();
    if (pending > 1_000) this.samples.push(pending);
  }

  get ms(): number {
    return performance.now() - this.#started;
  }
}

interface Row {
  shape: string;
  healthz: { probes: number; p50: number; p99: number; max: number; failed: number };
  judgedS: number | undefined;
  outcome: string;
  rssMb: { before: number; peak: number };
  servesUuid: string;
  sigtermS: string;
}

async function runShape(
  root: string,
  shape: HostileShape,
  size: number,
  capMs: number,
  clusters: string,
  warm: boolean,
) {
  const prod = localEndpoint("prod");
  await using ns = await testNamespace(`hostile-${shape}`, { contexts: ["prod"] });
  const dir = await Deno.makeTempDir({ prefix: "hostile-secret-" });
  const api = localApi("prod");
  const kubeconfig = `${dir}/hub.yaml`;
  await Deno.writeTextFile(
    kubeconfig,
    kubeconfigText([{ name: "prod", server: prod.server, caPem: prod.caPem, user: { token: prod.token } }]),
  );
  const port = freePort();
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      ...runTaskPermissions(),
      `${root}/src/cli/main.ts`,
      ...["--kubeconfig", kubeconfig, "--clusters", clusters, "--cluster-secrets", ns.name, "--namespace", ns.name],
      ...["--liveness", `http://127.0.0.1:${port}/healthz`, "--log-format", "json", "--operators", "uuid"],
    ],
    cwd: root,
    env: { NO_COLOR: "1" },
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).spawn();
  let exited = false;
  const status = child.status.then((s) => (exited = true, s));
  const get = async (path: string, timeoutMs = 2_000) => {
    const res = await fetch(`http://127.0.0.1:${port}${path}`, { signal: AbortSignal.timeout(timeoutMs) });
    return { status: res.status, body: await res.json().catch(() => undefined) };
  };
  const until = async (what: string, check: () => Promise<boolean>, ms: number) => {
    const deadline = performance.now() + ms;
    while (performance.now() < deadline) {
      if (await check().catch(() => false)) return true;
      await new Promise((r) => setTimeout(r, 250));
    }
    console.error(`${shape}: no ${what} within ${ms / 1000} s`);
    return false;
  };
  try {
    await until("readiness", async () => (await get("/readyz")).status === 200, 60_000);
    if (warm) {
      await api.request("POST", `/api/v1/namespaces/${ns.name}/secrets`, {
        apiVersion: "v1",
        kind: "Secret",
        metadata: { name: "warm", namespace: ns.name, labels: { [LABEL]: "true" } },
        data: { kubeconfig: btoa("apiVersion: v1\nkind: Config\ncontexts: []\n") },
      });
      await until("the warm-up Secret judged", async () => {
        const s = (await get("/status", 5_000)).body;
        return (s?.providers?.secret?.errors ?? []).some((e: { source: string }) => e.source === `${ns.name}/warm`);
      }, 60_000);
    }
    const name = `hostile-${shape.replace(/[^a-z]/g, "")}`;
    const text = hostileKubeconfig(shape, { name, server: prod.server, caPem: prod.caPem, token: prod.token }, size);
    const rssBefore = memoryMb(child.pid).rss;
    let rssPeak = rssBefore;
    const rssTimer = setInterval(() => rssPeak = Math.max(rssPeak, memoryMb(child.pid).rss), 100);
    const prober = new Prober(`http://127.0.0.1:${port}/healthz`);
    const created = performance.now();
    await api.request("POST", `/api/v1/namespaces/${ns.name}/secrets`, {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name, namespace: ns.name, labels: { [LABEL]: "true" } },
      data: { kubeconfig: btoa(text) },
    }, { timeoutMs: 60_000 });
    let outcome = `not judged within ${capMs / 1000} s`;
    let judgedS: number | undefined;
    const source = `${ns.name}/${name}`;
    await until("judgement", async () => {
      const s = (await get("/status", 5_000)).body;
      const error = (s?.providers?.secret?.errors ?? []).find((e: { source: string }) => e.source === source)?.error;
      const entry = s?.clusters?.[name];
      if (error) outcome = `refused: ${error}`;
      else if (entry?.state === "watching") outcome = "accepted: engaged and watching";
      else return false;
      judgedS = (performance.now() - created) / 1000;
      return true;
    }, capMs);
    // /healthz once it is judged, a little longer: what the hub does right after.
    await new Promise((r) => setTimeout(r, 2_000));
    await prober.stop();
    clearInterval(rssTimer);
    const uuid = `after-${Date.now()}`;
    const t0 = performance.now();
    await api.createUuid(ns.name, uuid);
    const served = await waitAllAssigned(api, ns.name, 1, 30_000).then(() => true, () => false);
    const servesUuid = served ? `yes, in ${round((performance.now() - t0) / 1000, 1)} s` : "no (30 s)";
    const t1 = performance.now();
    child.kill("SIGTERM");
    const stopped = await Promise.race([
      status.then(() => true),
      new Promise((r) => setTimeout(() => r(false), 20_000)),
    ]);
    const sigtermS = stopped ? `${round((performance.now() - t1) / 1000, 1)} s` : "ignored for 20 s (killed)";
    const s = prober.samples;
    return {
      shape: `${shape} ${shape === "contexts" ? `${size}` : `${Math.round(size / 1024)} KiB`}`,
      healthz: {
        probes: s.length,
        p50: round(percentile(s, 50), 0),
        p99: round(percentile(s, 99), 0),
        max: round(Math.max(...s), 0),
        failed: prober.failed,
      },
      judgedS: judgedS === undefined ? undefined : round(judgedS, 1),
      outcome: outcome.length > 150 ? `${outcome.slice(0, 147)}...` : outcome,
      rssMb: { before: round(rssBefore, 0), peak: round(rssPeak, 0) },
      servesUuid,
      sigtermS,
    } satisfies Row;
  } finally {
    if (!exited) child.kill("SIGKILL");
    await status;
    api.close();
    await Deno.remove(dir, { recursive: true });
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    args: Deno.args,
    options: {
      shapes: { type: "string", default: "anchors:1040000,alias-bomb:1040000,contexts:5000" },
      "cap-s": { type: "string", default: "90" },
      clusters: { type: "string", default: "all" },
      root: { type: "string", default: new URL("../..", import.meta.url).pathname.replace(/\/$/, "") },
      warm: { type: "boolean", default: false },
    },
  });
  requireClusters();
  console.log(
    `tree: ${values.root}; --clusters ${values.clusters}${values.warm ? "; worker warmed" : ""}; ` +
      new Date().toISOString(),
  );
  console.log(
    "| Secret | /healthz p50 / p99 / max, ms (probes, failed) | judged in, s | outcome | RSS before → peak, MB | " +
      "new Uuid in prod | SIGTERM → exit |\n|---|---|---:|---|---|---|---|",
  );
  for (const item of values.shapes.split(",")) {
    const [shape, size] = item.split(":");
    const capMs = Number(values["cap-s"]) * 1000;
    const r = await runShape(values.root, shape as HostileShape, Number(size), capMs, values.clusters, values.warm);
    const h = r.healthz;
    console.log(
      `| ${r.shape} | ${h.p50} / ${h.p99} / ${h.max} (${h.probes}, ${h.failed}) | ${
        r.judgedS ?? "-"
      } | ${r.outcome} | ` +
        `${r.rssMb.before} → ${r.rssMb.peak} | ${r.servesUuid} | ${r.sigtermS} |`,
    );
  }
}

await main();

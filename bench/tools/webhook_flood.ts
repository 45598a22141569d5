// The admission port against a stranger's load, figure by figure, on a real hub serving the Website example's webhooks
// in prod, staging and dev (loopback only):
//   latest  — while 2,000 idle connections (half TLS-handshaken, half bare TCP) and 500 slowloris heads hold the port,
//             each reopened when the hub closes it: is `kubectl apply --dry-run=server` of an `image: nginx:latest`
//             Website refused with the operator's message, and does a valid one get its default, in each cluster?
//   series  — 20,000 POSTs naming clusters the hub does not serve: admission series in /metrics, its size, hub RSS;
//   bodies  — 256 connections each sending a body of 4 MiB − 1 byte but its last byte, and holding it: hub RSS.
//
// Usage: deno run -A bench/tools/webhook_flood.ts [--hub-root DIR] [--phases latest,series,bodies]
//          [--idle 2000] [--slowloris 500] [--tries 3] [--requests 20000] [--bodies 256]
//   --hub-root runs the hub of another checkout (e.g. `git archive <commit> | tar -x -C DIR`): a before/after on one
//   machine, with the same load generator.
// Assumptions: the local clusters are up (`deno task clusters:up`); the flood and the hub share this machine's cores.

import { parseArgs } from "node:util";
import { freePort } from "../../dev/support/free_port.ts";
import { runTaskPermissions } from "../../dev/support/hub_process.ts";
import { kubectl, kubectlOk } from "../../dev/support/kubectl.ts";
import { requireClusters } from "../../dev/support/local_clusters.ts";
import { testNamespace } from "../../dev/support/namespace.ts";
import { applySharedCrd } from "../../dev/support/crds.ts";
import { openFileLimit, WebhookFlood } from "../../dev/support/webhook_flood.ts";
import { memoryMb } from "../lib/proc.ts";
import { round, summarize } from "../lib/stats.ts";

const ROOT = new URL("../..", import.meta.url).pathname;
const CLUSTERS = ["prod", "staging", "dev"];
const MiB = 1024 * 1024;

/** A hub subprocess from `root` (this checkout or another), with the Website example's webhooks. */
class Hub {
  readonly port = freePort();
  readonly webhookPort = freePort();
  readonly child: Deno.ChildProcess;
  readonly #done: Promise<Deno.CommandStatus>;

  constructor(root: string, ns: string, readonly name: string) {
    this.child = new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        ...runTaskPermissions(),
        `${root}/src/cli/main.ts`,
        "--kubeconfig",
        `${ROOT}clusters/local.yaml`,
        "--clusters",
        CLUSTERS.join(","),
        "--liveness",
        `http://127.0.0.1:${this.port}/healthz`,
        "--log-format",
        "json",
        "--log-level",
        "error",
        "--namespace",
        ns,
        "--operators",
        "none",
        "--webhook-bind-address",
        `127.0.0.1:${this.webhookPort}`,
        "--webhook-name",
        name,
        `${root}/examples/website_operator.ts`,
      ],
      cwd: root,
      env: { NO_COLOR: "1" },
      stdin: "null",
      stdout: "null",
      stderr: "null",
    }).spawn();
    this.#done = this.child.status;
  }

  get pid(): number {
    return this.child.pid;
  }

  async get(path: string): Promise<string> {
    const res = await fetch(`http://127.0.0.1:${this.port}${path}`);
    return await res.text();
  }

  /** Waits for both configurations in every cluster; the CA bundle they carry. */
  async installed(): Promise<string> {
    const end = Date.now() + 90_000;
    for (;;) {
      try {
        const s = JSON.parse(await this.get("/status"));
        if (CLUSTERS.every((c) => s.admission?.clusters?.[c]?.configurations === 2)) break;
      } catch { /* not up yet */ }
      if (Date.now() > end) throw new Error("the hub did not install its webhook configurations within 90 s");
      await sleep(300);
    }
    const cfg = JSON.parse(
      await kubectlOk("prod", [
        "get",
        "validatingwebhookconfiguration",
        `operator-hub-website-${this.name}`,
        "-o",
        "json",
      ]),
    );
    return atob(cfg.webhooks[0].clientConfig.caBundle);
  }

  rssMb(): number {
    return round(memoryMb(this.pid).rss, 1);
  }

  async stop(): Promise<void> {
    try {
      this.child.kill("SIGTERM");
    } catch { /* gone */ }
    const t = setTimeout(() => this.child.kill("SIGKILL"), 10_000);
    await this.#done;
    clearTimeout(t);
  }
}

function website(ns: string, name: string, image: string): string {
  return JSON.stringify({
    apiVersion: "examples.operator-hub.dev/v1",
    kind: "Website",
    metadata: { name, namespace: ns },
    spec: { image },
  });
}

/** Per cluster, `tries` dry-run applies of a :latest Website and of a valid one, while the flood holds the port. */
async function latest(hub: Hub, ca: string, ns: string, o: { idle: number; slowloris: number; tries: number }) {
  const flood = new WebhookFlood({
    port: hub.webhookPort,
    caCert: ca,
    tlsIdle: Math.ceil(o.idle / 2),
    tcpIdle: Math.floor(o.idle / 2),
    slowloris: o.slowloris,
    maxOpens: 20 * (o.idle + o.slowloris),
    maxDurationMs: 120_000,
  });
  const t0 = Date.now();
  flood.start();
  await flood.firstPass;
  const filled = { ms: Date.now() - t0, ...flood.stats };
  await sleep(2_000);
  const out: Record<string, unknown> = {};
  await Promise.all(CLUSTERS.map(async (c) => {
    let refused = 0;
    let defaulted = 0;
    const ms: number[] = [];
    for (let i = 0; i < o.tries; i++) {
      const s = Date.now();
      const bad = await kubectl(c, ["apply", "--dry-run=server", "-f", "-"], {
        stdin: website(ns, "bad", "nginx:latest"),
      });
      ms.push(Date.now() - s);
      if (bad.code !== 0 && /pin a version instead of :latest/.test(bad.stderr)) refused++;
      const good = await kubectl(c, ["apply", "--dry-run=server", "-o", "json", "-f", "-"], {
        stdin: website(ns, "good", "nginx:1.27"),
      });
      if (good.code === 0 && JSON.parse(good.stdout).spec?.content === "<h1>good</h1>") defaulted++;
    }
    const t = summarize(ms);
    out[c] = {
      latest_refused: `${refused}/${o.tries}`,
      defaults_applied: `${defaulted}/${o.tries}`,
      apply_ms: { median: t.median, max: t.max },
    };
  }));
  const during = flood.stats;
  const after = await flood.stop();
  return {
    flood: { idle: o.idle, slowloris: o.slowloris, first_pass: filled, during_applies: during, total: after },
    clusters: out,
    hub_rss_mb: hub.rssMb(),
  };
}

/** `n` POSTs, each naming a cluster the hub does not serve: series, /metrics bytes and RSS before and after. */
async function series(hub: Hub, ca: string, n: number) {
  const count = (text: string) => text.split("\n").filter((l) => l.startsWith("controller_runtime_webhook_")).length;
  const m0 = await hub.get("/metrics");
  const before = { series: count(m0), metrics_bytes: m0.length, rss_mb: hub.rssMb() };
  const http = Deno.createHttpClient({ caCerts: [ca] });
  const body = JSON.stringify({
    apiVersion: "admission.k8s.io/v1",
    kind: "AdmissionReview",
    request: { uid: "u", operation: "CREATE", object: { metadata: { name: "w", namespace: "x" }, spec: {} } },
  });
  const codes: Record<number, number> = {};
  let next = 0;
  const t0 = Date.now();
  await Promise.all(Array.from({ length: 16 }, async () => {
    while (next < n) {
      const i = next++;
      try {
        const res = await fetch(`https://127.0.0.1:${hub.webhookPort}/admission/website/mutating/defaults/c-${i}`, {
          client: http,
          method: "POST",
          headers: { "content-type": "application/json" },
          body,
        });
        await res.body?.cancel();
        codes[res.status] = (codes[res.status] ?? 0) + 1;
      } catch {
        codes[0] = (codes[0] ?? 0) + 1;
      }
    }
  }));
  http.close();
  const seconds = (Date.now() - t0) / 1000;
  const m1 = await hub.get("/metrics");
  const after = { series: count(m1), metrics_bytes: m1.length, rss_mb: hub.rssMb() };
  await sleep(5_000);
  return { requests: n, seconds: round(seconds, 1), codes, before, after, rss_mb_5s_later: hub.rssMb() };
}

/** `n` connections each sending a body of 4 MiB − 1 byte but its last byte: peak and later hub RSS. */
async function bodies(hub: Hub, ca: string, n: number) {
  const rss0 = hub.rssMb();
  const length = 4 * MiB - 1;
  const head = new TextEncoder().encode(
    `POST /admission/website/validating/image/prod HTTP/1.1\r\nHost: 127.0.0.1\r\ncontent-type: application/json\r\n` +
      `content-length: ${length}\r\n\r\n`,
  );
  const chunk = new Uint8Array(64 * 1024).fill(0x20);
  let peak = rss0;
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      peak = Math.max(peak, hub.rssMb());
      await sleep(100);
    }
  })();
  const conns: Deno.Conn[] = [];
  const outcome = { sent_whole: 0, cut_short: 0, failed_to_connect: 0 };
  let next = 0;
  await Promise.all(Array.from({ length: 32 }, async () => {
    while (next < n) {
      next++;
      let connected = false;
      try {
        const conn = await Deno.connectTls({ hostname: "127.0.0.1", port: hub.webhookPort, caCerts: [ca] });
        connected = true;
        conns.push(conn);
        await conn.write(head);
        for (let left = length - 1; left > 0;) {
          const part = chunk.subarray(0, Math.min(chunk.length, left));
          for (let off = 0; off < part.length;) off += await conn.write(part.subarray(off));
          left -= part.length;
        }
        outcome.sent_whole++;
      } catch {
        if (connected) outcome.cut_short++;
        else outcome.failed_to_connect++;
      }
    }
  }));
  await sleep(3_000);
  const held = hub.rssMb();
  for (const c of conns) {
    try {
      c.close();
    } catch { /* closed */ }
  }
  await sleep(5_000);
  sampling = false;
  await sampler;
  return {
    connections: n,
    body_bytes: length,
    outcome,
    rss_mb: { before: rss0, peak: round(peak, 1), holding: held, closed_5s_later: hub.rssMb() },
  };
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    args: Deno.args,
    options: {
      "hub-root": { type: "string", default: ROOT.replace(/\/$/, "") },
      phases: { type: "string", default: "latest,series,bodies" },
      idle: { type: "string", default: "2000" },
      slowloris: { type: "string", default: "500" },
      tries: { type: "string", default: "3" },
      requests: { type: "string", default: "20000" },
      bodies: { type: "string", default: "256" },
    },
  });
  requireClusters();
  const phases = values.phases.split(",");
  const root = values["hub-root"];
  console.log(JSON.stringify({ hub_root: root, fd_limit: { flood: openFileLimit() } }));
  await Promise.all(CLUSTERS.map(async (c) => {
    await applySharedCrd(c, `${ROOT}examples/website_crd.yaml`);
    await kubectlOk(c, ["wait", "--for=condition=Established", "crd/websites.examples.operator-hub.dev"]);
  }));
  await using ns = await testNamespace("webhook-flood");
  // One hub per phase, so each starts from the same state.
  for (const phase of phases) {
    const hub = new Hub(root, ns.name, ns.name.slice(-8));
    try {
      const ca = await hub.installed();
      await sleep(2_000);
      const started = { rss_mb: hub.rssMb(), fd_limit: openFileLimit(hub.pid) };
      let result: unknown;
      if (phase === "latest") {
        result = await latest(hub, ca, ns.name, {
          idle: Number(values.idle),
          slowloris: Number(values.slowloris),
          tries: Number(values.tries),
        });
      } else if (phase === "series") result = await series(hub, ca, Number(values.requests));
      else if (phase === "bodies") result = await bodies(hub, ca, Number(values.bodies));
      else throw new Error(`unknown phase ${phase}: latest, series or bodies`);
      console.log(JSON.stringify({ phase, hub: started, ...result as Record<string, unknown> }, null, 1));
    } finally {
      await hub.stop();
      await new Deno.Command(Deno.execPath(), {
        args: [
          "run",
          ...runTaskPermissions(),
          `${ROOT}src/cli/main.ts`,
          "cleanup",
          "--kubeconfig",
          `${ROOT}clusters/local.yaml`,
          "--clusters",
          CLUSTERS.join(","),
          "--namespace",
          ns.name,
          "--webhook-name",
          hub.name,
        ],
        stdout: "null",
        stderr: "null",
      }).output();
    }
  }
}

if (import.meta.main) await main();

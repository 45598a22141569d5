// CPU per status write for each way the hub can talk to an API server, measured in one process against
// the real local prod apiserver: our HTTP/1.1 sockets (the default), Deno's fetch over HTTP/2 (`--http2`)
// and over HTTP/1.1, and node:https (used only for insecure-skip-tls-verify). Rounds alternate so a
// noisy machine hits every transport alike; the table shows medians.
//
// Usage: deno run -A bench/tools/transport_probe.ts [--objects N] [--rounds R] [--concurrency C] [--base DIR] [--only-base]
// --base DIR adds the default transport of another checkout (e.g. `git archive HEAD | tar -x -C DIR`) as a
// baseline, alternating with this one in the same process; --only-base compares just those two.

import https from "node:https";
import process from "node:process";
import { parseArgs } from "node:util";
import { KubeClient, loadContexts } from "../../src/kube/mod.ts";
import { localEndpoint } from "../../dev/support/cluster_api.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    objects: { type: "string" },
    rounds: { type: "string" },
    concurrency: { type: "string" },
    base: { type: "string" },
    "only-base": { type: "boolean" },
  },
});
const N = Number(values.objects ?? 1000);
const ROUNDS = Number(values.rounds ?? 3);
const C = Number(values.concurrency ?? 16);
const ROOT = new URL("../..", import.meta.url).pathname;
const MERGE = "application/merge-patch+json";

const ep = localEndpoint("prod");
const [access] = (await loadContexts({ files: [`${ROOT}clusters/local.yaml`] })).select(["prod"]);
const ns = `transport-probe-${Date.now().toString(36)}`;
const base = `/apis/demo.operator/v1/namespaces/${ns}/uuid`;
const names = Array.from({ length: N }, (_, i) => `o-${i}`);

type Patch = (path: string, body: string) => Promise<void>;

async function pool(fn: (name: string) => Promise<void>): Promise<void> {
  let i = 0;
  await Promise.all(Array.from({ length: C }, async () => {
    while (i < names.length) await fn(names[i++]);
  }));
}

function cpuMs(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

const h1 = new KubeClient(access);
const h2 = new KubeClient(access, { http2: true });
const fetchH1 = Deno.createHttpClient({ caCerts: [ep.caPem], http1: true, http2: false });
const agent = new https.Agent({ keepAlive: true, maxSockets: C, ca: ep.caPem });
const auth = `Bearer ${ep.token}`;

const transports: Record<string, Patch> = {
  "KubeClient default (own HTTP/1.1 sockets)": async (path, body) => {
    await h1.request("PATCH", path, { body, contentType: MERGE, discardBody: true });
  },
  ...(await baseline()),
  "KubeClient --http2 (Deno fetch, HTTP/2)": async (path, body) => {
    await h2.request("PATCH", path, { body, contentType: MERGE, discardBody: true });
  },
  "Deno fetch, HTTP/1.1": async (path, body) => {
    const res = await fetch(ep.server + path, {
      method: "PATCH",
      client: fetchH1,
      headers: { authorization: auth, "content-type": MERGE, accept: "application/json" },
      body,
    });
    await res.arrayBuffer();
    if (!res.ok) throw new Error(`PATCH ${path}: ${res.status}`);
  },
  "node:https keep-alive Agent": (path, body) =>
    new Promise<void>((resolve, reject) => {
      const req = https.request({
        host: new URL(ep.server).hostname,
        port: new URL(ep.server).port,
        path,
        method: "PATCH",
        agent,
        headers: { authorization: auth, "content-type": MERGE, "content-length": Buffer.byteLength(body) },
      }, (res) => {
        res.resume();
        res.on("end", () => (res.statusCode === 200 ? resolve() : reject(new Error(`PATCH: ${res.statusCode}`))));
      });
      req.on("error", reject);
      req.end(body);
    }),
};

/** The default transport of the checkout in --base, loaded from there. */
async function baseline(): Promise<Record<string, Patch>> {
  if (!values.base) return {};
  const dir = new URL(values.base.replace(/\/?$/, "/"), `file://${Deno.cwd()}/`);
  const base = await import(new URL("src/kube/mod.ts", dir).href) as { KubeClient: typeof KubeClient };
  const client = new base.KubeClient(access);
  return {
    [`KubeClient default from ${values.base}`]: async (path, body) => {
      await client.request("PATCH", path, { body, contentType: MERGE, discardBody: true });
    },
  };
}

if (values["only-base"]) {
  if (!values.base) throw new Error("--only-base needs --base DIR");
  for (const k of Object.keys(transports).slice(2)) delete transports[k];
}

try {
  await h1.request("POST", "/api/v1/namespaces", { body: { metadata: { name: ns } } });
  await pool(async (name) => {
    await h1.request("POST", base, { body: { apiVersion: "demo.operator/v1", kind: "Uuid", metadata: { name } } });
  });
  const samples: Record<string, number[]> = Object.fromEntries(Object.keys(transports).map((k) => [k, []]));
  let round = 0;
  for (let r = 0; r < ROUNDS + 1; r++) {
    for (const [label, patch] of Object.entries(transports)) {
      const body = JSON.stringify({ status: { message: `round ${++round}` } });
      const c0 = cpuMs();
      await pool((name) => patch(`${base}/${name}/status`, body));
      // The first round warms every transport (JIT, connections) and is not counted.
      if (r > 0) samples[label].push(((cpuMs() - c0) / N) * 1000);
    }
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const ref = median(samples[Object.keys(transports)[0]]);
  console.log(`\n${N} status writes per round, concurrency ${C}, ${ROUNDS} rounds (process CPU, user + system)\n`);
  console.log("| transport | CPU µs per write, median (min–max) | vs default |");
  console.log("|---|---:|---:|");
  for (const [label, xs] of Object.entries(samples)) {
    console.log(
      `| ${label} | ${median(xs).toFixed(0)} (${Math.min(...xs).toFixed(0)}–${Math.max(...xs).toFixed(0)}) | ${
        (median(xs) / ref).toFixed(2)
      }× |`,
    );
  }
} finally {
  // Delete the objects in one call, then the namespace (its controller removes it in the background).
  await h1.request("DELETE", base).catch(() => {});
  await h1.request("DELETE", `/api/v1/namespaces/${ns}`).catch(() => {});
  h1.close();
  h2.close();
  fetchH1.close();
  agent.destroy();
}

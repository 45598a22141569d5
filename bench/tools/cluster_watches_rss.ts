// What a cluster's idle watches cost a Deno process, by how they reach the server: resident memory and CPU per cluster
// holding `--watches` idle watches (the default operators hold three: Uuids, and Mirror's ConfigMaps and Secrets by
// label), with nothing of the hub loaded.
//
//   deno run -A bench/tools/cluster_watches_rss.ts [--clusters 300] [--watches 3] [--mode h1|h2|node-h2] [--idle-s 60] [--json]
//
// `h1`: every watch on its own Deno.connect + Deno.startTls connection with one pending 4 KiB read (what the hub's
// HTTP/1.1 sockets do); `h2`: one Deno.createHttpClient per cluster (HTTP/2 only), every watch of the cluster a fetch
// on it, so a stream of one connection; `node-h2`: one node:http2 session per cluster, every watch a stream of it.
// Clusters are the bench's tenant namespaces, round-robin over prod, staging and dev (each its own client, as each
// kubeconfig context is in the hub). Prints RSS before and after, their difference per cluster, the open TCP
// connections, and the process's CPU over `--idle-s` seconds of idle as % of one core.

import { parseArgs } from "node:util";
import * as http2 from "node:http2";
import { localEndpoint } from "../../dev/support/cluster_api.ts";
import { ensureTenantNamespaces, removeTenantNamespaces, tenants } from "../lib/tenants.ts";
import { openAndMeasure, sleep } from "../lib/open_watches.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    clusters: { type: "string", default: "300" },
    watches: { type: "string", default: "3" },
    mode: { type: "string", default: "h1" },
    settle: { type: "string", default: "10000" },
    "idle-s": { type: "string", default: "60" },
    json: { type: "boolean", default: false },
  },
});
const n = Number(values.clusters);
const perCluster = Number(values.watches);
const mode = values.mode!;
if (!["h1", "h2", "node-h2"].includes(mode)) {
  console.error(`cluster_watches_rss: invalid --mode "${mode}": choose h1, h2 or node-h2`);
  Deno.exit(2);
}
const servers = ["prod", "staging", "dev"];
const list = tenants(n, servers);
const made = await ensureTenantNamespaces(list);
const eps = new Map(servers.map((s) => [s, localEndpoint(s)]));
/** utime + stime of this process, in seconds. */
const cpuSeconds = () => {
  const f = Deno.readTextFileSync("/proc/self/stat").split(") ")[1].split(" ");
  return (Number(f[11]) + Number(f[12])) / 100;
};
const tcpConnections = () => {
  let count = 0;
  for (const e of Deno.readDirSync("/proc/self/fd")) {
    try {
      if (Deno.readLinkSync(`/proc/self/fd/${e.name}`).startsWith("socket:")) count++;
    } catch { /* closed meanwhile */ }
  }
  return count;
};
const paths = (ns: string) =>
  [
    `/apis/demo.operator/v1/namespaces/${ns}/uuid`,
    `/api/v1/namespaces/${ns}/configmaps?labelSelector=operator-hub.bench%2Fmirror`,
    `/api/v1/namespaces/${ns}/secrets?labelSelector=operator-hub.bench%2Fmirror`,
  ].slice(0, perCluster).map((p) =>
    p + (p.includes("?") ? "&" : "?") + "watch=1&allowWatchBookmarks=true&timeoutSeconds=1800"
  );

const held: unknown[] = [];
async function openH1(i: number): Promise<void> {
  const t = list[i];
  const ep = eps.get(t.apiserver)!;
  const url = new URL(ep.server);
  for (const path of paths(t.namespace)) {
    const tcp = await Deno.connect({ hostname: url.hostname, port: Number(url.port) });
    tcp.setNoDelay(true);
    const conn = await Deno.startTls(tcp, { hostname: url.hostname, caCerts: [ep.caPem], alpnProtocols: ["http/1.1"] });
    const req = `GET ${path} HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: Bearer ${ep.token}\r\n` +
      `Accept: application/json\r\n\r\n`;
    await conn.write(new TextEncoder().encode(req));
    const buf = new Uint8Array(4096);
    const got = await conn.read(buf);
    const head = new TextDecoder().decode(buf.subarray(0, got ?? 0));
    if (!head.startsWith("HTTP/1.1 200")) throw new Error(`watch ${path}: ${head.split("\r\n")[0]}`);
    (async () => {
      while ((await conn.read(buf)) !== null) { /* bookmarks */ }
    })().catch(() => {});
    held.push(conn);
  }
}
async function openH2(i: number): Promise<void> {
  const t = list[i];
  const ep = eps.get(t.apiserver)!;
  const client = Deno.createHttpClient({ caCerts: [ep.caPem], http1: false, http2: true });
  held.push(client);
  for (const path of paths(t.namespace)) {
    const res = await fetch(ep.server + path, {
      client,
      headers: { authorization: `Bearer ${ep.token}`, accept: "application/json" },
    });
    if (res.status !== 200) throw new Error(`watch ${path}: ${res.status}`);
    const reader = res.body!.getReader();
    (async () => {
      while (!(await reader.read()).done) { /* bookmarks */ }
    })().catch(() => {});
    held.push(reader);
  }
}
async function openNodeH2(i: number): Promise<void> {
  const t = list[i];
  const ep = eps.get(t.apiserver)!;
  const session = http2.connect(ep.server, { ca: ep.caPem });
  held.push(session);
  for (const path of paths(t.namespace)) {
    await new Promise<void>((resolve, reject) => {
      const req = session.request({
        ":method": "GET",
        ":path": path,
        authorization: `Bearer ${ep.token}`,
        accept: "application/json",
      });
      req.on("response", (h) => {
        if (h[":status"] !== 200) reject(new Error(`watch ${path}: ${h[":status"]}`));
        else resolve();
      });
      req.on("error", reject);
      req.on("data", () => {});
      req.end();
    });
  }
}
const open = mode === "h1" ? openH1 : mode === "h2" ? openH2 : openNodeH2;
const { before, after, openSeconds } = await openAndMeasure(open, n, Number(values.settle));
const idleS = Number(values["idle-s"]);
const cpu0 = cpuSeconds();
const w0 = performance.now();
await sleep(idleS * 1000);
const idleCpuPct = (cpuSeconds() - cpu0) / ((performance.now() - w0) / 1000) * 100;
const result = {
  mode,
  clusters: n,
  watches_per_cluster: perCluster,
  open_seconds: Math.round(openSeconds * 100) / 100,
  sockets: tcpConnections(),
  rss_before_mib: Math.round(before * 10) / 10,
  rss_after_mib: Math.round(after * 10) / 10,
  rss_mib_per_cluster: Math.round((after - before) / (n - 1) * 10000) / 10000,
  idle_cpu_pct: Math.round(idleCpuPct * 1000) / 1000,
  idle_cpu_pct_per_1000_clusters: Math.round(idleCpuPct * 1000 / n * 1000) / 1000,
};
console.log(values.json ? JSON.stringify(result) : Object.entries(result).map(([k, v]) => `${k}: ${v}`).join("\n"));
await removeTenantNamespaces(made);
Deno.exit(0);

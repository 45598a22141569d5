// The floor: Deno's own resident memory for one idle TLS watch, measured with nothing of the hub loaded.
//
//   OPERATOR_HUB_PORT_OFFSET=… deno run -A bench/tools/idle_watches.ts [--n 1000] [--mode tls|fetch|fetch-shared]
//                                                                [--buffer 4096] [--json]
//
// Opens `n` watches of empty namespaces' Uuids (the bench's tenant namespaces, round-robin over prod, staging and dev)
// and keeps them idle, each on its own connection: `tls` is Deno.connect + Deno.startTls with the CA, one pending
// read into a `buffer`-byte array per connection (what src/kube/wire/_http1.ts does); `fetch` is one Deno.createHttpClient
// per watch (one per cluster, as clusters with different CAs need) and a pending body read; `fetch-shared` is one
// HttpClient for all (a lower bound no multi-cluster client can reach: every cluster has its own CA and credentials).
// Prints the RSS before and after, and (after - before) / n as `deno_idle_watch_mib_per_cluster`.

import { parseArgs } from "node:util";
import { localEndpoint } from "../../dev/support/cluster_api.ts";
import { ensureTenantNamespaces, removeTenantNamespaces, tenants } from "../lib/tenants.ts";
import { openAndMeasure } from "../lib/open_watches.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    n: { type: "string", default: "1000" },
    mode: { type: "string", default: "tls" },
    buffer: { type: "string", default: "4096" },
    settle: { type: "string", default: "10000" },
    json: { type: "boolean", default: false },
  },
});
const n = Number(values.n);
const mode = values.mode!;
const bufferBytes = Number(values.buffer);
if (!["tls", "fetch", "fetch-shared"].includes(mode)) {
  console.error(`idle_watches: invalid --mode "${mode}": choose tls, fetch or fetch-shared`);
  Deno.exit(2);
}
const servers = ["prod", "staging", "dev"];
const list = tenants(n, servers);
// Namespaces made here are removed at the end; those a caller made (the clusters phase) stay for it to remove.
const made = await ensureTenantNamespaces(list);
const eps = new Map(servers.map((s) => [s, localEndpoint(s)]));
const path = (ns: string) =>
  `/apis/demo.operator/v1/namespaces/${ns}/uuid?watch=1&allowWatchBookmarks=true&timeoutSeconds=1800`;

// Warm up the code paths once (TLS, fetch, the decoder), so their one-off cost is in "before".
const held: unknown[] = [];
async function openTls(i: number): Promise<void> {
  const t = list[i];
  const ep = eps.get(t.apiserver)!;
  const url = new URL(ep.server);
  const tcp = await Deno.connect({ hostname: url.hostname, port: Number(url.port) });
  tcp.setNoDelay(true);
  const conn = await Deno.startTls(tcp, { hostname: url.hostname, caCerts: [ep.caPem], alpnProtocols: ["http/1.1"] });
  const req = `GET ${path(t.namespace)} HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: Bearer ${ep.token}\r\n` +
    `Accept: application/json\r\n\r\n`;
  await conn.write(new TextEncoder().encode(req));
  const buf = new Uint8Array(bufferBytes);
  const got = await conn.read(buf);
  const head = new TextDecoder().decode(buf.subarray(0, got ?? 0));
  if (!head.startsWith("HTTP/1.1 200")) throw new Error(`watch ${t.namespace}: ${head.split("\r\n")[0]}`);
  const pump = async () => {
    while ((await conn.read(buf)) !== null) { /* bookmarks, if any */ }
  };
  pump().catch(() => {});
  held.push(conn);
}
let shared: Deno.HttpClient | undefined;
async function openFetch(i: number): Promise<void> {
  const t = list[i];
  const ep = eps.get(t.apiserver)!;
  const client = mode === "fetch-shared"
    ? (shared ??= Deno.createHttpClient({ caCerts: [...eps.values()].map((e) => e.caPem), http2: false }))
    : Deno.createHttpClient({ caCerts: [ep.caPem], http2: false });
  const res = await fetch(ep.server + path(t.namespace), {
    client,
    headers: { authorization: `Bearer ${ep.token}`, accept: "application/json" },
  });
  if (res.status !== 200) throw new Error(`watch ${t.namespace}: ${res.status}`);
  const reader = res.body!.getReader();
  const pump = async () => {
    while (!(await reader.read()).done) { /* bookmarks, if any */ }
  };
  pump().catch(() => {});
  held.push(client, reader);
}
const open = mode === "tls" ? openTls : openFetch;
const { before, after, openSeconds } = await openAndMeasure(open, n, Number(values.settle));
const perWatch = (after - before) / (n - 1);
const result = {
  mode,
  watches: n,
  buffer_bytes: mode === "tls" ? bufferBytes : undefined,
  open_seconds: Math.round(openSeconds * 100) / 100,
  rss_before_mib: Math.round(before * 10) / 10,
  rss_after_mib: Math.round(after * 10) / 10,
  deno_idle_watch_mib_per_cluster: Math.round(perWatch * 10000) / 10000,
};
console.log(values.json ? JSON.stringify(result) : Object.entries(result).map(([k, v]) => `${k}: ${v}`).join("\n"));
await removeTenantNamespaces(made);
Deno.exit(0);

// Measures the protected port's two figures against the real local prod apiserver (not part of `deno task test`):
// - the latency a cached, authorised scrape adds over today's plain /metrics (median of many, same run), over plain
//   HTTP (reviews only) and over HTTPS (reviews + TLS, kept-alive connection as Prometheus keeps);
// - the TokenReviews per minute under one scrape every 15 s, counted by the hub and by the apiserver.
//
// Usage: export OPERATOR_HUB_PORT_OFFSET=...; deno task clusters:up
//        deno run -A tests/production/protected_port_figures.ts [--scrapes 300] [--minutes 3]

import { parseArgs } from "node:util";
import { tempDir } from "../../dev/support/fault_cluster.ts";
import { HubProcess } from "../../dev/support/hub_process.ts";
import { apiserverMetrics, requireClusters, testNamespace } from "../support/mod.ts";
import { metricSum, parseMetrics } from "../support/prometheus_text.ts";
import { median, opensslPair, readerAccount, startProtectedHub, waitProbe } from "./_protected_support.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: { scrapes: { type: "string", default: "300" }, minutes: { type: "string", default: "3" } },
});
const SCRAPES = Number(values.scrapes);
const MINUTES = Number(values.minutes);

requireClusters();
const ns = await testNamespace("figures", { contexts: ["prod"] });
const dir = await tempDir("figures");
const reader = await readerAccount("prod", ns.name, "scraper", { metricsReader: true });
const token = await reader.token("1h");
const pem = await opensslPair(dir.path, "serving", "figures");
const plain = HubProcess.start({ clusters: ["prod"], args: ["--namespace", ns.name] });
const http = startProtectedHub({ clusters: ["prod"], secure: false, args: ["--namespace", ns.name] });
const https = startProtectedHub({
  clusters: ["prod"],
  args: [
    "--namespace",
    ns.name,
    "--tls-cert-file",
    `${dir.path}/serving.crt`,
    "--tls-private-key-file",
    `${dir.path}/serving.key`,
  ],
});
const tlsClient = Deno.createHttpClient({ caCerts: [pem.ca] });
const auth = { authorization: `Bearer ${token}` };

async function scrape(url: string, headers: Record<string, string> = {}, client?: Deno.HttpClient): Promise<number> {
  const t0 = performance.now();
  const res = await fetch(url, { headers, client });
  await res.arrayBuffer();
  const ms = performance.now() - t0;
  if (res.status !== 200) throw new Error(`${url} answered ${res.status}`);
  return ms;
}

const tokenReviewsAtApiserver = async () =>
  metricSum(parseMetrics(await apiserverMetrics("prod")), "apiserver_request_total", {
    resource: "tokenreviews",
    verb: "POST",
  });

try {
  for (const h of [plain, http.hub, https.hub]) await waitProbe(h, (s) => s === 200, "ready");
  const targets = {
    plain: () => scrape(`http://127.0.0.1:${plain.port}/metrics`),
    http: () => scrape(`${http.url}/metrics`, auth),
    https: () => scrape(`${https.url}/metrics`, auth, tlsClient),
  };
  for (let i = 0; i < 20; i++) for (const t of Object.values(targets)) await t(); // warm-up, fills the caches
  const samples: Record<string, number[]> = { plain: [], http: [], https: [] };
  for (let i = 0; i < SCRAPES; i++) {
    for (const [name, t] of Object.entries(targets)) samples[name].push(await t());
  }
  // Baseline of Deno's own TLS server, no hub, no auth: a static body of the same size over a kept-alive connection.
  const body = new Uint8Array(
    Number((await fetch(`http://127.0.0.1:${plain.port}/metrics`).then((r) => r.arrayBuffer())).byteLength),
  );
  const bare = Deno.serve(
    { hostname: "127.0.0.1", port: 0, cert: pem.cert, key: pem.key, onListen() {} },
    () => new Response(body),
  );
  samples.bare_deno_tls = [];
  for (let i = 0; i < 20; i++) await scrape(`https://127.0.0.1:${bare.addr.port}/`, {}, tlsClient);
  for (let i = 0; i < SCRAPES; i++) {
    samples.bare_deno_tls.push(await scrape(`https://127.0.0.1:${bare.addr.port}/`, {}, tlsClient));
  }
  await bare.shutdown();
  const med = Object.fromEntries(Object.entries(samples).map(([k, v]) => [k, Math.round(median(v) * 1000) / 1000]));
  const latency = {
    scrapes: SCRAPES,
    median_ms: med,
    added_ms_cached_auth_http: Math.round((med.http - med.plain) * 1000) / 1000,
    added_ms_cached_auth_https: Math.round((med.https - med.plain) * 1000) / 1000,
  };
  console.log(JSON.stringify({ latency }));

  // One scrape every 15 s with one token, as Prometheus would (skipped with --minutes 0).
  if (MINUTES > 0) await countTokenReviews();
} finally {
  tlsClient.close();
  for (const h of [plain, http.hub, https.hub]) await h.kill();
  await reader.cleanup();
  await dir.remove();
  await ns.cleanup();
}

async function countTokenReviews(): Promise<void> {
  const hubReviews = async () =>
    metricSum(
      parseMetrics(await (await fetch(`${https.url}/metrics`, { headers: auth, client: tlsClient })).text()),
      "hub_access_reviews_total",
      { review: "TokenReview" },
    );
  const hubBefore = await hubReviews();
  const apiBefore = await tokenReviewsAtApiserver();
  const started = performance.now();
  const scrapes = Math.round(MINUTES * 4);
  for (let i = 0; i < scrapes; i++) {
    await scrape(`${https.url}/metrics`, auth, tlsClient);
    await new Promise((r) => setTimeout(r, 15_000));
  }
  const minutes = (performance.now() - started) / 60_000;
  const hubAfter = await hubReviews();
  const apiAfter = await tokenReviewsAtApiserver();
  console.log(JSON.stringify({
    tokenReviews: {
      scrapes,
      minutes: Math.round(minutes * 100) / 100,
      per_minute_hub: Math.round(((hubAfter - hubBefore) / minutes) * 100) / 100,
      per_minute_apiserver: Math.round(((apiAfter - apiBefore) / minutes) * 100) / 100,
    },
  }));
}

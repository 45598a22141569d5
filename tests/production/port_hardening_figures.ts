// Measures what the connection gate costs a request (not part of `deno task test`): the median latency of one GET on
// loopback through serveGated versus Deno.serve alone, same handler, on a fresh connection per request (as kubelet
// probes) and, for Deno.serve, on a kept-alive one (the gate serves one request per connection); and over HTTPS (the
// protected port), serveGated behind its TCP front versus the TLS gate alone. Needs no clusters.
//
// Usage: deno run -A tests/production/port_hardening_figures.ts [--requests 500]

import { parseArgs } from "node:util";
import { serveGated } from "../../src/hub/http/gated_server.ts";
import { ConnectionSlots } from "../../src/hub/http/connection_slots.ts";
import { selfSignedTls } from "../../src/hub/http/tls_material.ts";
import { median } from "./_protected_support.ts";

const { values } = parseArgs({ args: Deno.args, options: { requests: { type: "string", default: "500" } } });
const REQUESTS = Number(values.requests);
const body = JSON.stringify({ status: "ok", ready: true, notReady: [], clusters: { prod: { state: "watching" } } });
const handler = () => new Response(body, { headers: { "content-type": "application/json" } });

async function sample(url: string, fresh: boolean, caCerts: string[] = []): Promise<number[]> {
  const out: number[] = [];
  const shared = Deno.createHttpClient({ caCerts });
  try {
    for (let i = 0; i < REQUESTS + 20; i++) {
      const client = fresh ? Deno.createHttpClient({ caCerts }) : shared;
      const t0 = performance.now();
      const res = await fetch(url, { client });
      await res.arrayBuffer();
      if (i >= 20) out.push(performance.now() - t0); // the first 20 warm up
      if (fresh) client.close();
      if (res.status !== 200) throw new Error(`${url} answered ${res.status}`);
    }
  } finally {
    shared.close();
  }
  return out;
}

const gated = serveGated({ hostname: "127.0.0.1", port: 0 }, handler);
const bare = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, handler);
const pair = await selfSignedTls();
const tls = { cert: pair.cert, key: pair.key };
const fronted = serveGated({ hostname: "127.0.0.1", port: 0, tls }, handler);
// Slots of its own: the TLS gate listens on the public socket itself, with no front.
const tlsGate = serveGated({ hostname: "127.0.0.1", port: 0, tls, slots: new ConnectionSlots(256) }, handler);
try {
  const ms = (v: number[]) => Math.round(median(v) * 1000) / 1000;
  const figures = {
    requests: REQUESTS,
    gated_fresh_connection_ms: ms(await sample(`http://127.0.0.1:${gated.addr.port}/healthz`, true)),
    deno_serve_fresh_connection_ms: ms(await sample(`http://127.0.0.1:${bare.addr.port}/healthz`, true)),
    deno_serve_kept_alive_ms: ms(await sample(`http://127.0.0.1:${bare.addr.port}/healthz`, false)),
    https_fronted_fresh_connection_ms: ms(await sample(`https://127.0.0.1:${fronted.addr.port}/`, true, [pair.cert])),
    https_gate_alone_fresh_connection_ms: ms(
      await sample(`https://127.0.0.1:${tlsGate.addr.port}/`, true, [pair.cert]),
    ),
  };
  console.log(JSON.stringify(figures));
} finally {
  await gated.shutdown();
  await bare.shutdown();
  await fronted.shutdown();
  await tlsGate.shutdown();
}

// Tests of watches as HTTP/2 streams against the real local apiserver of context prod: several streams share one
// session, aborts and server ends, a server name other than the host, and the idle close.
import assert from "node:assert/strict";
import { adminToken, apiserverCa, apiserverUrl, requireClusters } from "../../../dev/support/local_clusters.ts";
import { VirtualClock } from "../../util/mod.ts";
import { Call } from "./_call.ts";
import { H2StreamError, H2Streams, H2UnsupportedError } from "./_h2_streams.ts";
import { FaultProxy } from "../../../dev/support/fault_proxy.ts";
import { http1OnlyPeer } from "../../../dev/support/http1_only_peer.ts";
import { STATE_DIR } from "../../../dev/clusters/_layout.ts";
import * as http2 from "node:http2";

function target() {
  requireClusters();
  return {
    origin: apiserverUrl("prod"),
    ca: apiserverCa("prod"),
    auth: { authorization: `Bearer ${adminToken("prod")}` },
  };
}
const newCall = () => new Call(new VirtualClock(0), undefined, new Set());
const dec = new TextDecoder();

Deno.test("H2Streams carries several watches as streams of one session, each with its own events", async () => {
  const { origin, ca, auth } = target();
  const h2 = new H2Streams({ origin, caCerts: [ca], rejectUnauthorized: true });
  try {
    const calls = [newCall(), newCall(), newCall()];
    const paths = [
      "/api/v1/namespaces",
      "/api/v1/namespaces/default/configmaps",
      "/api/v1/namespaces/default/services",
    ];
    const res = await Promise.all(
      paths.map((p, i) => h2.request("GET", `${p}?watch=true&timeoutSeconds=60`, auth, calls[i])),
    );
    assert.equal(h2.sessions, 1);
    assert.equal(h2.streams, 3);
    for (const [i, r] of res.entries()) {
      assert.equal(r.status, 200);
      assert.match(r.header("content-type") ?? "", /application\/json/);
      const it = r.chunks(true)[Symbol.asyncIterator]();
      const first = await it.next();
      assert.equal(first.done, false);
      assert.match(dec.decode(first.value!), /"type":"ADDED"/, paths[i]);
      calls[i].close();
      // The abort closes the stream: the body ends at once instead of after the watch's 60 s.
      assert.equal((await it.next()).done, true);
    }
    await waitUntil(() => h2.streams === 0);
    assert.equal(h2.sessions, 1, "the idle session stays until idleMs");
  } finally {
    h2.close();
  }
});

Deno.test("H2Streams ends a body at the server's end, and reads a short answer whole within a limit", async () => {
  const { origin, ca, auth } = target();
  const h2 = new H2Streams({ origin, caCerts: [ca], rejectUnauthorized: true });
  try {
    const res = await h2.request(
      "GET",
      "/api/v1/namespaces/default/configmaps?watch=true&timeoutSeconds=1",
      auth,
      newCall(),
    );
    let bytes = 0;
    for await (const c of res.chunks()) bytes += c.length;
    assert.ok(bytes > 0);
    const v = await h2.request("GET", "/version", auth, newCall());
    assert.match(JSON.parse(await v.text(64 * 1024)).gitVersion, /^v1\./);
    const big = await h2.request("GET", "/openapi/v2", auth, newCall());
    await assert.rejects(big.text(1024), { name: "BodyLimitError" });
  } finally {
    h2.close();
  }
});

Deno.test("H2Streams checks the certificate against serverName, and rejects a request aborted while it waits", async () => {
  const { origin, ca, auth } = target();
  const good = new H2Streams({ origin, caCerts: [ca], serverName: "kubernetes.default", rejectUnauthorized: true });
  const bad = new H2Streams({ origin, caCerts: [ca], serverName: "wrong.example", rejectUnauthorized: true });
  try {
    assert.equal((await good.request("GET", "/version", auth, newCall())).status, 200);
    await assert.rejects(bad.request("GET", "/version", auth, newCall()), /wrong\.example/);
    const call = newCall();
    const pending = good.request("GET", "/api/v1/namespaces?watch=true&timeoutSeconds=60", auth, call);
    call.close();
    await assert.rejects(pending);
  } finally {
    good.close();
    bad.close();
  }
});

Deno.test("H2Streams reads a whole 401 answer though the apiserver closes the connection after it (GOAWAY), then reconnects", async () => {
  const { origin, ca, auth } = target();
  const h2 = new H2Streams({ origin, caCerts: [ca], rejectUnauthorized: true });
  try {
    const res = await h2.request("GET", "/version", { authorization: "Bearer not-a-valid-token" }, newCall());
    assert.equal(res.status, 401);
    assert.equal(JSON.parse(await res.text(64 * 1024)).reason, "Unauthorized");
    assert.equal((await h2.request("GET", "/version", auth, newCall())).status, 200);
  } finally {
    h2.close();
  }
});

Deno.test("H2Streams without verification (insecure-skip-tls-verify) reaches a server it has no CA for", async () => {
  const { origin, auth } = target();
  const strict = new H2Streams({ origin, caCerts: [], rejectUnauthorized: true });
  const loose = new H2Streams({ origin, caCerts: [], rejectUnauthorized: false });
  try {
    await assert.rejects(strict.request("GET", "/version", auth, newCall()));
    assert.equal((await loose.request("GET", "/version", auth, newCall())).status, 200);
  } finally {
    strict.close();
    loose.close();
  }
});

Deno.test("H2Streams: close() errors an open body; the idle session is closed after idleMs", async () => {
  const { origin, ca, auth } = target();
  const h2 = new H2Streams({ origin, caCerts: [ca], rejectUnauthorized: true, idleMs: 50 });
  const res = await h2.request("GET", "/api/v1/namespaces?watch=true&timeoutSeconds=60", auth, newCall());
  const read = (async () => {
    for await (const _ of res.chunks()) { /* events */ }
  })();
  h2.close();
  await assert.rejects(read, H2StreamError);
  assert.equal(h2.sessions, 0);
  await assert.rejects(h2.request("GET", "/version", auth, newCall()), H2StreamError);

  const idle = new H2Streams({ origin, caCerts: [ca], rejectUnauthorized: true, idleMs: 50 });
  try {
    await (await idle.request("GET", "/version", auth, newCall())).discard();
    await waitUntil(() => idle.sessions === 0);
  } finally {
    idle.close();
  }
});

Deno.test("H2Streams rejects with H2UnsupportedError when the server offers only HTTP/1.1 (ALPN), and sends nothing", async () => {
  const { ca, auth } = target();
  const peer = http1OnlyPeer();
  const h2 = new H2Streams({ origin: `https://127.0.0.1:${peer.port}`, caCerts: [ca], rejectUnauthorized: true });
  try {
    await assert.rejects(h2.request("GET", "/version", auth, newCall()), H2UnsupportedError);
    assert.equal(peer.received(), 0, "no request byte was sent");
  } finally {
    h2.close();
    await peer.close();
  }
});

async function waitUntil(ok: () => boolean, ms = 5_000): Promise<void> {
  const until = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > until) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 10));
  }
}

Deno.test("H2Streams.aliveWithin() is true once a stream received its response, false before and after the session is gone", async () => {
  const { origin, ca, auth } = target();
  const h2 = new H2Streams({ origin, caCerts: [ca], rejectUnauthorized: true });
  try {
    assert.equal(h2.aliveWithin(60_000), false, "no session yet");
    const call = newCall();
    const res = await h2.request("GET", "/api/v1/namespaces?watch=true&timeoutSeconds=60", auth, call);
    assert.equal(res.status, 200);
    assert.equal(h2.aliveWithin(60_000), true, "a response head arrived just now");
    assert.equal(h2.aliveWithin(-1), false, "nothing arrived in the future");
    call.close();
  } finally {
    h2.close();
  }
  assert.equal(h2.aliveWithin(60_000), false, "closed: no session takes streams");
});

Deno.test("H2Streams.confirmAlive() is true while the apiserver answers a PING on the session, false once the connection is half-open or gone", async () => {
  const { origin, ca, auth } = target();
  const proxy = FaultProxy.start({ targetPort: Number(new URL(origin).port) });
  // A TCP proxy: TLS and HTTP/2 run end to end with the apiserver, and stall() freezes the socket (half-open).
  const h2 = new H2Streams({ origin: proxy.url, caCerts: [ca], rejectUnauthorized: true });
  try {
    assert.equal(await h2.confirmAlive(0, 1_000), false, "no session yet");
    const call = newCall();
    const res = await h2.request("GET", "/api/v1/namespaces?watch=true&timeoutSeconds=60", auth, call);
    assert.equal(res.status, 200);
    assert.equal(await h2.confirmAlive(0, 2_000), true, "nothing within 0 ms: the PING was answered");
    assert.equal(proxy.stall(), 1, "one connection carries the watch");
    const started = performance.now();
    assert.equal(await h2.confirmAlive(0, 500), false, "a half-open connection answers no PING");
    assert.ok(performance.now() - started < 5_000, "bounded by its timeout");
    call.close();
  } finally {
    h2.close();
    await proxy.close();
  }
  assert.equal(await h2.confirmAlive(60_000, 1_000), false, "closed: no session");
});

Deno.test("H2Streams gives up on a server that accepts the connection and never completes the TLS handshake, and connects anew next time", async () => {
  // A peer standing in for a stalled server: it accepts and holds the socket without a byte.
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const held: Deno.Conn[] = [];
  const accepting = (async () => {
    for await (const conn of listener) held.push(conn);
  })();
  const h2 = new H2Streams({
    origin: `https://127.0.0.1:${listener.addr.port}`,
    rejectUnauthorized: false,
    handshakeTimeoutMs: 300,
  });
  try {
    const started = performance.now();
    let guard: ReturnType<typeof setTimeout> | undefined;
    const hang = new Promise((resolve) =>
      guard = setTimeout(() => resolve(new Error("hang guard: still waiting")), 10_000)
    );
    const err = await Promise.race([h2.request("GET", "/version", {}, newCall()).catch((e) => e), hang]);
    clearTimeout(guard);
    const tookMs = performance.now() - started;
    assert.ok(err instanceof H2StreamError, String(err));
    assert.match(err.message, /TLS handshake with https:\/\/127\.0\.0\.1:\d+ did not complete within 300 ms/);
    assert.ok(tookMs >= 290 && tookMs < 10_000, `gave up after ${tookMs} ms`);
    await waitUntil(() => h2.sessions === 0);
    await h2.request("GET", "/version", {}, newCall()).catch(() => {});
    await waitUntil(() => held.length === 2); // a new connection, not the destroyed session
  } finally {
    h2.close();
    listener.close();
    for (const c of held) {
      try {
        c.close();
      } catch { /* closed */ }
    }
    await accepting.catch(() => {});
  }
});

Deno.test("H2Streams rejects a request whose stream the server closes before any response, naming that", async () => {
  const { ca } = target();
  const certFile = `${STATE_DIR}/prod/certs/apiserver.crt`;
  // A stand-in server with the prod apiserver's certificate that ends every stream (NO_ERROR) without answering.
  const server = http2.createSecureServer({
    cert: Deno.readTextFileSync(certFile),
    key: Deno.readTextFileSync(certFile.replace(/\.crt$/, ".key")),
  });
  server.on("stream", (stream) => stream.close());
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  const h2 = new H2Streams({ origin: `https://127.0.0.1:${port}`, caCerts: [ca], rejectUnauthorized: true });
  try {
    await assert.rejects(
      h2.request("GET", "/api/v1/namespaces", {}, newCall()),
      (err) => err instanceof H2StreamError && /the stream closed before a response arrived/.test(err.message),
    );
  } finally {
    h2.close();
    await new Promise((resolve) => server.close(resolve));
  }
});

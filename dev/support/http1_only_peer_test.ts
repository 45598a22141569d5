// Tests for the HTTP/1.1-only TLS peer the HTTP/2 tests use.
import assert from "node:assert/strict";
import { apiserverCa, requireClusters } from "./local_clusters.ts";
import { http1OnlyPeer } from "./http1_only_peer.ts";

Deno.test("http1OnlyPeer() completes a TLS handshake trusted through prod's CA, agrees to HTTP/1.1 only, and counts the bytes it receives", async () => {
  requireClusters();
  const peer = http1OnlyPeer();
  try {
    const conn = await Deno.connectTls({
      hostname: "127.0.0.1",
      port: peer.port,
      caCerts: [apiserverCa("prod")],
      alpnProtocols: ["h2", "http/1.1"],
    });
    const { alpnProtocol } = await conn.handshake();
    assert.equal(alpnProtocol, "http/1.1");
    await conn.write(new TextEncoder().encode("GET / HTTP/1.1\r\n\r\n"));
    conn.close();
    const until = Date.now() + 5_000;
    while (peer.received() < 18 && Date.now() < until) await new Promise((r) => setTimeout(r, 10));
    assert.equal(peer.received(), 18);
  } finally {
    await peer.close();
  }
});

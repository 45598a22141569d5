// Tests of a handler served behind the gate, over real HTTP on loopback.
import assert from "node:assert/strict";
import { serveGated } from "./gated_server.ts";
import { heldSockets, silentStrangers } from "../../../dev/support/held_sockets.ts";
import { selfSignedTls } from "./tls_material.ts";

/** Raw HTTP/1.1 exchange on `port`: the whole answer until the server closes. */
async function exchange(port: number, head: string): Promise<string> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  await conn.write(new TextEncoder().encode(head));
  let out = "";
  const buf = new Uint8Array(4096);
  const guard = setTimeout(() => conn.close(), 5_000);
  try {
    for (let n = await conn.read(buf); n !== null; n = await conn.read(buf)) {
      out += new TextDecoder().decode(buf.subarray(0, n));
    }
  } finally {
    clearTimeout(guard);
    try {
      conn.close();
    } catch { /* closed by the guard */ }
  }
  return out;
}

Deno.test("serveGated() on loopback answers 421 to a foreign Host before the handler runs, and serves loopback Hosts once per connection", async () => {
  const seen: string[] = [];
  const server = serveGated({ hostname: "127.0.0.1", port: 0 }, (req) => {
    seen.push(req.headers.get("host") ?? "");
    return new Response("ok\n");
  });
  try {
    const port = server.addr.port;
    const evil = await exchange(port, "GET /healthz HTTP/1.1\r\nHost: evil.example\r\n\r\n");
    assert.match(evil, /^HTTP\/1\.1 421 /);
    assert.match(evil, /bound to loopback/);
    const ok = await exchange(port, `GET /healthz HTTP/1.1\r\nHost: localhost:${port}\r\n\r\n`);
    assert.match(ok, /^HTTP\/1\.1 200 /);
    assert.match(ok, /connection: close/i);
    // A second request on the same connection is never served: one request per connection.
    const two = await exchange(
      port,
      `GET /a HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: keep-alive\r\n\r\nGET /b HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`,
    );
    assert.equal(two.match(/^HTTP\/1\.1 /gm)?.length, 1, two);
    assert.deepEqual(seen, [`localhost:${port}`, "127.0.0.1"]);
  } finally {
    await server.shutdown();
  }
});

Deno.test("serveGated() on 0.0.0.0 takes any Host header", async () => {
  const server = serveGated({ hostname: "0.0.0.0", port: 0 }, () => new Response("ok\n"));
  try {
    assert.match(
      await exchange(server.addr.port, "GET / HTTP/1.1\r\nHost: hub.monitoring.svc\r\n\r\n"),
      /^HTTP\/1\.1 200 /,
    );
  } finally {
    await server.shutdown();
  }
});

Deno.test("serveGated() answers 403 to a request reaching its inner port without the gate, and never runs the handler for it", async () => {
  let calls = 0;
  const server = serveGated({ hostname: "127.0.0.1", port: 0 }, () => {
    calls++;
    return new Response("ok\n");
  });
  try {
    const innerPort = server.innerAddr.port;
    assert.notEqual(innerPort, server.addr.port);
    const direct = await exchange(innerPort, "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
    assert.match(direct, /^HTTP\/1\.1 403 /);
    assert.equal(calls, 0);
    assert.match(await exchange(server.addr.port, "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"), /^HTTP\/1\.1 200 /);
    assert.equal(calls, 1);
  } finally {
    await server.shutdown();
  }
});

Deno.test("serveGated() over plain HTTP closes connections that never send a byte on their TCP socket, at the cap or the header timeout: none holds a descriptor", async () => {
  const server = serveGated({ hostname: "127.0.0.1", port: 0, maxConnections: 4, headerTimeoutMs: 400 }, () => {
    return new Response("ok");
  });
  const strangers = await silentStrangers(server.addr.port, 40);
  try {
    assert.equal(await heldSockets(server.addr.port), 0);
    assert.equal(strangers.stillOpen, 0);
    assert.equal(server.stats.evicted + server.stats.timedOut, 40);
  } finally {
    strangers.close();
    await server.shutdown();
  }
});

Deno.test("serveGated() over TLS closes connections that never send a hello on their TCP socket (its front), at the cap or the header timeout: none holds a descriptor, and each is counted once", async () => {
  const pair = await selfSignedTls();
  const server = serveGated({
    hostname: "127.0.0.1",
    port: 0,
    tls: { cert: pair.cert, key: pair.key },
    maxConnections: 4,
    headerTimeoutMs: 400,
  }, () => new Response("ok"));
  const strangers = await silentStrangers(server.addr.port, 40);
  const client = Deno.createHttpClient({ caCerts: [pair.cert] });
  try {
    assert.equal(await heldSockets(server.addr.port), 0, "sockets of the public port held");
    assert.equal(await heldSockets(server.innerAddr.port), 0, "sockets of the inner port held");
    assert.equal(strangers.stillOpen, 0, "strangers' connections left open");
    const { evicted, timedOut } = server.stats;
    assert.deepEqual({ evicted, timedOut }, { evicted: 36, timedOut: 4 });
    const res = await fetch(`https://127.0.0.1:${server.addr.port}/`, { client });
    assert.equal(await res.text(), "ok");
  } finally {
    strangers.close();
    client.close();
    await server.shutdown();
  }
});

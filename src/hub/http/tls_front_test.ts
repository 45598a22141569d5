// Unit tests for the TLS front: bytes piped to the server it names at each accept, the cap kept on what the server
// behind reports, and the end of a connection the TLS server behind closed before its handshake.
import assert from "node:assert/strict";
import { TlsFront, TlsFrontError } from "./tls_front.ts";
import { selfSignedTls } from "./tls_material.ts";

function echoServer(tag: string): { port: number; close(): void } {
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, () => new Response(tag));
  return { port: server.addr.port, close: () => void server.shutdown() };
}

Deno.test("TlsFront pipes each connection to the server named at its accept, on one public port", async () => {
  const a = echoServer("a");
  const b = echoServer("b");
  let upstream = a.port;
  const front = new TlsFront({ hostname: "127.0.0.1", port: 0 }, () => upstream);
  const client = Deno.createHttpClient({ poolMaxIdlePerHost: 0 });
  try {
    const get = async () => await (await fetch(`http://127.0.0.1:${front.addr.port}/`, { client })).text();
    assert.equal(await get(), "a");
    upstream = b.port;
    assert.equal(await get(), "b");
  } finally {
    client.close();
    front.abort();
    await front.finished;
    a.close();
    b.close();
  }
  assert.equal(front.open, 0);
});

/** A TCP server behind the front that accepts and holds each connection, for the test to mark or close. */
function holdingServer() {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const accepted: Deno.Conn[] = [];
  const loop = (async () => {
    for await (const c of listener) accepted.push(c);
  })();
  return {
    port: (listener.addr as Deno.NetAddr).port,
    accepted,
    async next(n: number): Promise<Deno.Conn> {
      while (accepted.length < n) await delay(5);
      return accepted[n - 1];
    },
    async close() {
      listener.close();
      for (const c of accepted) c.close();
      await loop.catch(() => {});
    },
  };
}

const connect = (front: TlsFront) => Deno.connect({ hostname: "127.0.0.1", port: front.addr.port });
const closedSoon = async (c: Deno.Conn) =>
  await Promise.race([c.read(new Uint8Array(8)).catch(() => null), delay(2_000).then(() => "open" as const)]);

Deno.test("TlsFront at its cap closes the connection idle the longest, as the server behind reports them, and refuses only when all are busy", async () => {
  const server = holdingServer();
  const shed: string[] = [];
  const front = new TlsFront(
    { hostname: "127.0.0.1", port: 0, maxConnections: 2, onShed: (r) => shed.push(r) },
    () => server.port,
  );
  const behind = front.behind();
  const clients: Deno.Conn[] = [];
  try {
    clients.push(await connect(front));
    const a = await server.next(1);
    clients.push(await connect(front));
    const b = await server.next(2);
    // a becomes busy (a request being answered), then b's request is answered: b is idle again, a is not.
    behind.mark(a, "busy");
    behind.mark(b, "busy");
    behind.mark(b, "idle");
    clients.push(await connect(front));
    assert.equal(await closedSoon(clients[1]), null, "the idle one made room");
    assert.equal(await closedSoon(b), null, "and its connection behind");
    const c = await server.next(3);
    behind.mark(c, "busy");
    clients.push(await connect(front));
    assert.equal(await closedSoon(clients[3]), null, "every connection busy: the newcomer is closed at once");
    assert.equal(await closedSoon(clients[0]), "open", "a busy connection is never closed to make room");
    assert.deepEqual(shed, ["evicted", "refused"]);
    assert.equal(front.refused, 1);
    assert.throws(() => new TlsFront({ hostname: "127.0.0.1", port: front.addr.port }, () => 1), TlsFrontError);
  } finally {
    for (const c of clients) c.close();
    front.abort();
    await front.finished;
    await server.close();
  }
});

Deno.test("TlsFront: a connection the TLS server behind closed before its handshake ends for the client once the server says so", async () => {
  const pair = await selfSignedTls();
  const tls = Deno.listenTls({ hostname: "127.0.0.1", port: 0, cert: pair.cert, key: pair.key });
  const front = new TlsFront({ hostname: "127.0.0.1", port: 0 }, () => (tls.addr as Deno.NetAddr).port);
  const client = await connect(front);
  try {
    // The server behind gives up on a client that never says hello: in Deno 2.9.6 its socket stays open.
    const accepted = await tls.accept();
    accepted.close();
    const read = () => Promise.race([client.read(new Uint8Array(64)), delay(500).then(() => "open" as const)]);
    assert.equal(await read(), "open", "the close alone does not reach the client");
    front.behind().close(accepted);
    assert.equal(await read(), null, "ended once the front ends the server's input");
    while (front.open > 0) await delay(5);
  } finally {
    client.close();
    tls.close();
    front.abort();
    await front.finished;
  }
});

function delay(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

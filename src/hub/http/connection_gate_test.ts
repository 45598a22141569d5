// Tests of the connection gate over real loopback sockets, with a plain TCP server standing behind it.
import assert from "node:assert/strict";
import { ConnectionGate, type ConnectionGateOptions, endsHead, oneRequestOnly } from "./connection_gate.ts";
import { readToClose } from "../../../dev/support/socket_reads.ts";

const enc = new TextEncoder();
const dec = new TextDecoder();

/** A TCP server behind the gate: records each head it receives; answers `reply` and closes, or holds when null. */
function backend(reply: string | null) {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const heads: string[] = [];
  const held: Deno.Conn[] = [];
  const loop = (async () => {
    for await (const conn of listener) {
      (async () => {
        const buf = new Uint8Array(4096);
        const n = await conn.read(buf).catch(() => null);
        heads.push(n ? dec.decode(buf.subarray(0, n)) : "");
        if (reply === null) return void held.push(conn);
        await conn.write(enc.encode(reply)).catch(() => {});
        conn.close();
      })();
    }
  })();
  return {
    heads,
    upstream: async () => ({
      conn: await Deno.connect({ hostname: "127.0.0.1", port: (listener.addr as Deno.NetAddr).port }),
      release: () => {},
    }),
    async close() {
      listener.close();
      for (const c of held) c.close();
      await loop.catch(() => {});
    },
  };
}

async function withGate(
  options: Partial<ConnectionGateOptions>,
  reply: string | null,
  fn: (gate: ConnectionGate, back: ReturnType<typeof backend>) => Promise<void>,
) {
  const back = backend(reply);
  const gate = new ConnectionGate({ hostname: "127.0.0.1", port: 0, ...options }, back.upstream);
  try {
    await fn(gate, back);
  } finally {
    gate.abort();
    await gate.finished;
    await back.close();
  }
}

const connect = (gate: ConnectionGate) => Deno.connect({ hostname: "127.0.0.1", port: gate.addr.port });

Deno.test("ConnectionGate closes a connection whose head has not arrived within the header timeout, and never hands it on", async () => {
  await withGate({ headerTimeoutMs: 150 }, "HTTP/1.1 200 OK\r\n\r\n", async (gate, back) => {
    const conn = await connect(gate);
    await conn.write(enc.encode("GET /healthz HTTP/1.1\r\nHost: x\r\n"));
    assert.equal(await readToClose(conn), "");
    conn.close();
    assert.equal(gate.stats.timedOut, 1);
    assert.equal(gate.stats.handedOn, 0);
    assert.deepEqual(back.heads, []);
  });
});

Deno.test("ConnectionGate hands a complete head on with connection: close after the request line, and copies the answer back", async () => {
  const answer = "HTTP/1.1 200 OK\r\ncontent-length: 3\r\n\r\nok\n";
  await withGate({}, answer, async (gate, back) => {
    const conn = await connect(gate);
    await conn.write(enc.encode("GET /healthz HTTP/1.1\r\nConnection: keep-alive\r\nHost: x\r\n\r\n"));
    assert.equal(await readToClose(conn), answer);
    conn.close();
    assert.deepEqual(back.heads, [
      "GET /healthz HTTP/1.1\r\nconnection: close\r\nConnection: keep-alive\r\nHost: x\r\n\r\n",
    ]);
    assert.equal(gate.stats.handedOn, 1);
  });
});

Deno.test("ConnectionGate at its cap closes the oldest connection still sending its head to admit a new one", async () => {
  await withGate({ maxConnections: 2 }, "HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n", async (gate) => {
    const first = await connect(gate);
    await first.write(enc.encode("GET / HTTP/1.1\r\n"));
    const second = await connect(gate);
    await second.write(enc.encode("GET / HTTP/1.1\r\n"));
    const third = await connect(gate);
    assert.equal(await readToClose(first), "", "the oldest slow client lost its place");
    await third.write(enc.encode("GET / HTTP/1.1\r\nHost: x\r\n\r\n"));
    assert.match(await readToClose(third), /^HTTP\/1\.1 200 OK/);
    for (const c of [first, second, third]) c.close();
    assert.equal(gate.stats.evicted, 1);
    assert.equal(gate.stats.refused, 0);
  });
});

Deno.test("ConnectionGate at its cap closes a new connection at once when every open one is already handed on", async () => {
  await withGate({ maxConnections: 2 }, null, async (gate, back) => {
    const served = [await connect(gate), await connect(gate)];
    for (const c of served) await c.write(enc.encode("GET / HTTP/1.1\r\nHost: x\r\n\r\n"));
    const deadline = Date.now() + 5_000;
    while (back.heads.length < 2) {
      if (Date.now() > deadline) throw new Error("hang guard: the two heads never reached the server behind");
      await new Promise((r) => setTimeout(r, 10));
    }
    const late = await connect(gate);
    assert.equal(await readToClose(late), "");
    for (const c of [...served, late]) c.close();
    assert.equal(gate.stats.refused, 1);
    assert.equal(gate.stats.evicted, 0);
  });
});

Deno.test("ConnectionGate closes a handed-on connection at the end of its lifetime when the server behind never answers", async () => {
  await withGate({ lifetimeMs: 200 }, null, async (gate, back) => {
    const conn = await connect(gate);
    await conn.write(enc.encode("GET / HTTP/1.1\r\nHost: x\r\n\r\n"));
    assert.equal(await readToClose(conn), "");
    conn.close();
    assert.equal(back.heads.length, 1, "the head was handed on");
    assert.equal(gate.stats.handedOn, 1);
    const deadline = Date.now() + 5_000;
    while (gate.open > 0) {
      if (Date.now() > deadline) throw new Error("hang guard: the gate still counts the connection open");
      await new Promise((r) => setTimeout(r, 10));
    }
  });
});

Deno.test("ConnectionGate answers 431 to a head over maxHeaderBytes and hands nothing on", async () => {
  await withGate({ maxHeaderBytes: 1024 }, "HTTP/1.1 200 OK\r\n\r\n", async (gate, back) => {
    const conn = await connect(gate);
    await conn.write(enc.encode(`GET / HTTP/1.1\r\nX-Big: ${"a".repeat(2048)}\r\n`));
    assert.match(await readToClose(conn), /^HTTP\/1\.1 431 /);
    conn.close();
    assert.equal(gate.stats.oversized, 1);
    assert.deepEqual(back.heads, []);
  });
});

Deno.test("ConnectionGate refuses to start with a non-positive limit, naming it", () => {
  assert.throws(
    () => new ConnectionGate({ hostname: "127.0.0.1", port: 0, maxConnections: 0 }, () => Promise.reject()),
    /maxConnections must be a positive number, got 0/,
  );
});

Deno.test("endsHead() finds the empty line ending a head (CRLF or bare LF) and nothing short of it", () => {
  const b = (s: string) => enc.encode(s);
  assert.equal(endsHead(b("GET / HTTP/1.1\r\nHost: x\r\n\r\n")), true);
  assert.equal(endsHead(b("GET / HTTP/1.1\nHost: x\n\n")), true);
  for (const partial of ["GET / HTTP/1.1\r\nHost: x\r\n", "GET / HTTP/1.1\r\nHost: x\r\n\r", "GET /"]) {
    assert.equal(endsHead(b(partial)), false, JSON.stringify(partial));
  }
});

Deno.test("oneRequestOnly() puts connection: close right after the request line, in the head's own line ending", () => {
  const r = (s: string) => dec.decode(oneRequestOnly(enc.encode(s)));
  assert.equal(r("GET / HTTP/1.1\r\nHost: x\r\n\r\n"), "GET / HTTP/1.1\r\nconnection: close\r\nHost: x\r\n\r\n");
  assert.equal(r("GET / HTTP/1.1\nHost: x\n\n"), "GET / HTTP/1.1\nconnection: close\nHost: x\n\n");
});

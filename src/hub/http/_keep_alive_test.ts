// Tests of the connection gate's keep-alive (_keep_alive.ts) over real loopback sockets, with Deno.serve behind the
// gate (serveGated): what the admission port runs.
import assert from "node:assert/strict";
import type { ConnectionGateOptions } from "./connection_gate.ts";
import { ConnectionSlots } from "./connection_slots.ts";
import { serveGated } from "./gated_server.ts";
import { readToClose, readUntil } from "../../../dev/support/socket_reads.ts";

const enc = new TextEncoder();

/** A gated server whose handler answers `n:BODY` (after `delayMs`), counting its calls. */
function keptAlive(options: Partial<ConnectionGateOptions>, delayMs = 0) {
  const bodies: string[] = [];
  const server = serveGated(
    { hostname: "127.0.0.1", port: 0, keepAlive: {}, ...options },
    async (req) => {
      const body = await req.text();
      bodies.push(body);
      if (delayMs) await new Promise((r) => setTimeout(r, delayMs));
      return new Response(`${bodies.length}:${body}`);
    },
  );
  return { server, bodies, connect: () => Deno.connect({ hostname: "127.0.0.1", port: server.addr.port }) };
}

const post = (body: string, extra = "") =>
  `POST /x HTTP/1.1\r\nHost: localhost\r\ncontent-length: ${body.length}\r\n${extra}\r\n${body}`;

Deno.test("ConnectionGate with keepAlive serves several requests on one connection, pipelined bodies included, and closes after maxRequests", async () => {
  const { server, bodies, connect } = keptAlive({ keepAlive: { maxRequests: 3 } });
  const conn = await connect();
  try {
    await conn.write(enc.encode(post("one")));
    assert.match(await readUntil(conn, /1:one$/), /^HTTP\/1\.1 200 OK/);
    // Two at once: the gate splits them at the content-length.
    await conn.write(enc.encode(post("two") + post("three")));
    const rest = await readToClose(conn);
    assert.match(rest, /2:two[\s\S]*3:three$/);
    assert.match(rest.slice(rest.indexOf("3:three") - 200), /connection: close/i, "the third answer closes");
    assert.deepEqual(bodies, ["one", "two", "three"]);
    assert.equal(server.stats.handedOn, 1, "one connection handed on for three requests");
    assert.equal(server.stats.accepted, 1);
  } finally {
    conn.close();
    await server.shutdown();
  }
});

Deno.test("ConnectionGate with keepAlive closes an idle connection after idleTimeoutMs, never one whose answer is pending", async () => {
  const { server, connect } = keptAlive({ keepAlive: { idleTimeoutMs: 100 } }, 400);
  const conn = await connect();
  try {
    const t0 = Date.now();
    await conn.write(enc.encode(post("slow")));
    // The handler takes 400 ms, four idle timeouts: the answer still arrives, then the connection closes.
    const got = await readToClose(conn);
    assert.match(got, /1:slow$/);
    const took = Date.now() - t0;
    assert.ok(took >= 450 && took < 3_000, `closed ${took} ms after the request`);
    assert.equal(server.stats.idleClosed, 1);
  } finally {
    conn.close();
    await server.shutdown();
  }
});

Deno.test("ConnectionGate with keepAlive gives each later head the header timeout from its first byte", async () => {
  const { server, bodies, connect } = keptAlive({ headerTimeoutMs: 150 });
  const conn = await connect();
  try {
    await conn.write(enc.encode(post("a")));
    await readUntil(conn, /1:a$/);
    // Idle longer than the header timeout is fine (idle has its own limit); a head that starts and stalls is not.
    await new Promise((r) => setTimeout(r, 300));
    await conn.write(enc.encode(post("b")));
    await readUntil(conn, /2:b$/);
    await conn.write(enc.encode("POST /x HTTP/1.1\r\nHost: localhost\r\n"));
    assert.equal(await readToClose(conn), "");
    assert.equal(server.stats.timedOut, 1);
    assert.deepEqual(bodies, ["a", "b"]);
  } finally {
    conn.close();
    await server.shutdown();
  }
});

Deno.test("ConnectionGate with keepAlive hands a chunked request on as the connection's last", async () => {
  const { server, bodies, connect } = keptAlive({});
  const conn = await connect();
  try {
    await conn.write(
      enc.encode("POST /x HTTP/1.1\r\nHost: localhost\r\ntransfer-encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n"),
    );
    assert.match(await readToClose(conn), /1:abc$/);
    assert.deepEqual(bodies, ["abc"]);
  } finally {
    conn.close();
    await server.shutdown();
  }
});

Deno.test("ConnectionGate with keepAlive: close() closes idle connections at once and one being answered once answered", async () => {
  const { server, connect } = keptAlive({ keepAlive: { idleTimeoutMs: 60_000 } }, 300);
  const idle = await connect();
  const busy = await connect();
  try {
    await idle.write(enc.encode(post("i")));
    await readUntil(idle, /:i$/);
    await busy.write(enc.encode(post("b")));
    await new Promise((r) => setTimeout(r, 50));
    const t0 = Date.now();
    const stopped = server.shutdown();
    assert.equal(await readToClose(idle, 1_000), "", "the idle one closed at once");
    assert.match(await readToClose(busy, 2_000), /:b$/, "the busy one answered, then closed");
    await stopped;
    assert.ok(Date.now() - t0 < 1_500, `shutdown took ${Date.now() - t0} ms (grace 2 s)`);
  } finally {
    idle.close();
    busy.close();
  }
});

Deno.test("ConnectionGate with keepAlive: retire() cuts no idle connection and answers its next request as its last", async () => {
  const { server, bodies, connect } = keptAlive({ keepAlive: { idleTimeoutMs: 60_000 } });
  const next = await connect();
  const quiet = await connect();
  try {
    for (const [conn, body] of [[next, "n"], [quiet, "q"]] as const) {
      await conn.write(enc.encode(post(body)));
      await readUntil(conn, new RegExp(`:${body}$`));
    }
    const retired = server.retire();
    // Idle and retired, the connection still takes a request (a client may be sending one right now): its last.
    await new Promise((r) => setTimeout(r, 100));
    await next.write(enc.encode(post("after")));
    const last = await readToClose(next, 2_000);
    assert.match(last, /:after$/, "the request sent after retire() was answered");
    assert.match(last, /connection: close/i, "and closed the connection");
    // The other one is left to its idle timeout (60 s): still open a while after retire(), closed by shutdown().
    await assert.rejects(readUntil(quiet, /./, 300), /hang guard/, "the quiet one was not closed by retire()");
    await server.shutdown();
    assert.equal(await readToClose(quiet, 2_000), "");
    await retired;
    assert.deepEqual(bodies, ["n", "q", "after"]);
  } finally {
    next.close();
    quiet.close();
    await server.shutdown();
  }
});

Deno.test("ConnectionGate without keepAlive stays one request per connection behind Deno.serve", async () => {
  const { server, bodies, connect } = keptAlive({ keepAlive: undefined });
  const conn = await connect();
  try {
    await conn.write(enc.encode(post("one") + post("two")));
    assert.match(await readToClose(conn), /1:one$/);
    assert.deepEqual(bodies, ["one"]);
  } finally {
    conn.close();
    await server.shutdown();
  }
});

/** A kept-alive gated server whose handler holds a request whose body is `hold` until `release()`. */
function holding(maxConnections: number, keptGraceMs?: number) {
  let release!: () => void;
  const held = new Promise<void>((r) => release = r);
  const slots = new ConnectionSlots<Deno.Conn>(maxConnections, { keptGraceMs });
  const server = serveGated({ hostname: "127.0.0.1", port: 0, keepAlive: {}, slots }, async (req) => {
    const body = await req.text();
    if (body === "hold") await held;
    return new Response(`got:${body}`);
  });
  const connect = () => Deno.connect({ hostname: "127.0.0.1", port: server.addr.port });
  return { server, connect, release };
}

Deno.test("ConnectionGate with keepAlive at its cap closes the connection idle the longest, kept-alive ones included, never one being answered", async () => {
  const { server, connect, release } = holding(3, 100);
  const conns: Deno.Conn[] = [];
  try {
    // Idle since its answer: kept alive between requests, its grace (100 ms) over.
    const kept = await connect();
    conns.push(kept);
    await kept.write(enc.encode(post("k")));
    await readUntil(kept, /got:k$/);
    await new Promise((r) => setTimeout(r, 300)); // the gate sees the answer go (it looks every 50 ms)
    // Idle since its accept, later: a head that never ends.
    const slow = await connect();
    conns.push(slow);
    await slow.write(enc.encode("POST /x HTTP/1.1\r\n"));
    // Being answered.
    const busy = await connect();
    conns.push(busy);
    await busy.write(enc.encode(post("hold")));
    await new Promise((r) => setTimeout(r, 100));
    const first = await connect();
    conns.push(first);
    assert.equal(
      await readToClose(slow),
      "",
      "the slow head went first (the kept-alive one became idle with its grace's end)",
    );
    const second = await connect();
    conns.push(second);
    assert.equal(await readToClose(kept), "", "then the kept-alive one");
    await second.write(enc.encode(post("s")));
    assert.match(await readUntil(second, /got:s$/), /^HTTP\/1\.1 200 OK/);
    release();
    assert.match(await readUntil(busy, /got:hold$/), /^HTTP\/1\.1 200 OK/, "the one being answered was never closed");
    assert.equal(server.stats.evicted, 2);
    assert.equal(server.stats.refused, 0);
  } finally {
    release();
    for (const c of conns) c.close();
    await server.shutdown();
  }
});

Deno.test("ConnectionGate with keepAlive at its cap closes a connection still sending its body when none is idle, and refuses only when every one is being answered", async () => {
  const { server, connect, release } = holding(2);
  const conns: Deno.Conn[] = [];
  try {
    const trickling = await connect();
    conns.push(trickling);
    await trickling.write(enc.encode("POST /x HTTP/1.1\r\nHost: localhost\r\ncontent-length: 100\r\n\r\n0123456789"));
    const busy = await connect();
    conns.push(busy);
    await busy.write(enc.encode(post("hold")));
    await new Promise((r) => setTimeout(r, 150));
    const late = await connect();
    conns.push(late);
    assert.equal(await readToClose(trickling), "", "the body that was still arriving made room");
    await late.write(enc.encode(post("hold")));
    await new Promise((r) => setTimeout(r, 150));
    const refused = await connect();
    conns.push(refused);
    assert.equal(await readToClose(refused), "", "both being answered: the newcomer is refused");
    release();
    assert.match(await readUntil(busy, /got:hold$/), /^HTTP\/1\.1 200 OK/);
    assert.match(await readUntil(late, /got:hold$/), /^HTTP\/1\.1 200 OK/);
    assert.deepEqual([server.stats.evicted, server.stats.refused], [1, 1]);
  } finally {
    release();
    for (const c of conns) c.close();
    await server.shutdown();
  }
});

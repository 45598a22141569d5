// Unit tests for reading one HTTP/1.1 response body off a connection (length, chunked, until EOF) and handing the
// connection back, over a ScriptedSocket (dev/support/scripted_socket.ts).
import assert from "node:assert/strict";
import { type Abortable, Connection, Http1Error } from "./_http1_connection.ts";
import { type ConnectionOwner, type Framing, Http1Response } from "./_http1_response.ts";
import { ScriptedSocket } from "../../../dev/support/scripted_socket.ts";
import { BodyLimitError } from "./_body_limit.ts";

const dec = new TextDecoder();

class Owner implements ConnectionOwner {
  released = 0;
  destroyed = 0;
  release(_c: Connection): void {
    this.released++;
  }
  destroy(_c: Connection): void {
    this.destroyed++;
  }
}

const notAborted: Abortable = { aborted: undefined, onAbort: () => {} };

/** A response whose body bytes arrive as `pieces`; `bufferSize` shrinks the connection's buffer to force moves. */
function response(
  framing: Framing,
  pieces: string[],
  o: { keepAlive?: boolean; bufferSize?: number; abort?: Abortable } = {},
) {
  const owner = new Owner();
  const c = new Connection(new ScriptedSocket(pieces).asConn());
  if (o.bufferSize) c.buf = new Uint8Array(o.bufferSize);
  const head = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nX-Dup: 1\r\nx-dup: 2\r\nRetry-After:  7 ";
  const res = new Http1Response(owner, c, 200, head, framing, o.keepAlive ?? true, o.abort ?? notAborted);
  return { res, owner, c };
}

/** Splits `s` into pieces of `n` characters. */
const split = (s: string, n: number) =>
  Array.from({ length: Math.ceil(s.length / n) }, (_, i) => s.slice(i * n, i * n + n));

Deno.test("A Content-Length body is read whole, then the connection goes back to the pool once", async () => {
  const body = '{"kind":"List","items":[]}';
  const t = response({ kind: "length", left: body.length }, split(body, 5));
  assert.equal(await t.res.text(), body);
  assert.deepEqual([t.owner.released, t.owner.destroyed], [1, 0]);
});

Deno.test("A Content-Length body on a connection that does not keep alive is read whole, then the connection is closed", async () => {
  const t = response({ kind: "length", left: 3 }, ["abc"], { keepAlive: false });
  assert.equal(await t.res.text(), "abc");
  assert.deepEqual([t.owner.released, t.owner.destroyed], [0, 1]);
});

Deno.test("A connection that closes before Content-Length bytes arrived fails with Http1Error and is not reused", async () => {
  const t = response({ kind: "length", left: 10 }, ["abc"]);
  await assert.rejects(t.res.text(), (err: Error) => err instanceof Http1Error && /closed mid-body/.test(err.message));
  assert.deepEqual([t.owner.released, t.owner.destroyed], [0, 1]);
});

Deno.test("A chunked body with extensions and trailers is reassembled exactly, whatever the read sizes and buffer size", async () => {
  const wire = "5;ext=1\r\nhello\r\n1\r\n \r\n6\r\nworld!\r\n0\r\nX-Trailer: a\r\nX-Other: bb\r\n\r\n";
  for (const bufferSize of [8, 16, 64, 4096]) {
    for (const piece of [1, 2, 3, 7, wire.length]) {
      const t = response({ kind: "chunked" }, split(wire, piece), { bufferSize });
      assert.equal(await t.res.text(), "hello world!", `buffer ${bufferSize}, pieces of ${piece}`);
      assert.deepEqual([t.owner.released, t.owner.destroyed], [1, 0], `buffer ${bufferSize}, pieces of ${piece}`);
      assert.equal(t.c.end - t.c.start, 0, "nothing of the next response was consumed");
    }
  }
});

Deno.test("The bytes after a chunked body's end stay in the buffer for the next response on the connection", async () => {
  const next = "HTTP/1.1 200 OK\r\n";
  const t = response({ kind: "chunked" }, ["3\r\nabc\r\n0\r\n\r\n" + next], { bufferSize: 64 });
  assert.equal(await t.res.text(), "abc");
  assert.equal(dec.decode(t.c.buf.subarray(t.c.start, t.c.end)), next);
});

Deno.test("Malformed chunked framing fails with Http1Error instead of being misread", async () => {
  for (const wire of ["zz\r\nabc\r\n0\r\n\r\n", "3\r\nabcX\r\n0\r\n\r\n", "3\r\nabc\r\n0\r\n"]) {
    const t = response({ kind: "chunked" }, [wire]);
    await assert.rejects(t.res.text(), Http1Error, JSON.stringify(wire));
    assert.deepEqual([t.owner.released, t.owner.destroyed], [0, 1]);
  }
  const long = response({ kind: "chunked" }, ["1".repeat(2000)]);
  await assert.rejects(long.res.text(), /chunk size line too long/);
});

Deno.test("A body delimited by the connection's end is read to EOF and the connection is not reused", async () => {
  const t = response({ kind: "eof" }, ["ab", "cd", "e"]);
  assert.equal(await t.res.text(), "abcde");
  assert.deepEqual([t.owner.released, t.owner.destroyed], [0, 1]);
});

Deno.test("chunks() yields copies that stay intact while the connection's buffer is reused", async () => {
  const t = response({ kind: "chunked" }, ["3\r\nabc\r\n", "3\r\ndef\r\n", "0\r\n\r\n"], { bufferSize: 16 });
  const got: Uint8Array[] = [];
  for await (const chunk of t.res.chunks()) got.push(chunk);
  assert.deepEqual(got.map((g) => dec.decode(g)), ["abc", "def"]);
  assert.equal(t.owner.released, 1);
});

Deno.test("A response without a body gives the connection back at once", async () => {
  const t = response({ kind: "none" }, []);
  assert.deepEqual([t.owner.released, t.owner.destroyed], [1, 0]);
  assert.equal(await t.res.text(), "");
  assert.equal(t.owner.released, 1, "released only once");
});

Deno.test("discard() reads the body to its end so the connection is reused; cancel() before reading closes it", async () => {
  const a = response({ kind: "length", left: 6 }, ["abc", "def"]);
  await a.res.discard();
  assert.deepEqual([a.owner.released, a.owner.destroyed], [1, 0]);
  const b = response({ kind: "length", left: 6 }, ["abc", "def"]);
  b.res.cancel();
  b.res.cancel();
  assert.deepEqual([b.owner.released, b.owner.destroyed], [0, 1]);
  assert.equal(await b.res.text(), "", "a cancelled body reads as empty");
});

Deno.test("Leaving chunks() early closes the connection instead of reusing one with unread bytes", async () => {
  const t = response({ kind: "chunked" }, ["3\r\nabc\r\n", "3\r\ndef\r\n", "0\r\n\r\n"], { bufferSize: 16 });
  for await (const _ of t.res.chunks()) break;
  assert.deepEqual([t.owner.released, t.owner.destroyed], [0, 1]);
});

Deno.test("A body read completely after its call was aborted closes the connection rather than pooling it", async () => {
  const t = response({ kind: "length", left: 3 }, ["abc"], {
    abort: { aborted: new Error("gone"), onAbort: () => {} },
  });
  assert.equal(await t.res.text(), "abc");
  assert.deepEqual([t.owner.released, t.owner.destroyed], [0, 1]);
});

Deno.test("header() finds a header by any case, trimmed, the last of repeated ones; ok means 2xx", () => {
  const t = response({ kind: "none" }, []);
  assert.equal(t.res.header("content-type"), "application/json");
  assert.equal(t.res.header("CONTENT-TYPE"), "application/json");
  assert.equal(t.res.header("x-dup"), "2");
  assert.equal(t.res.header("retry-after"), "7");
  assert.equal(t.res.header("missing"), null);
  assert.equal(t.res.ok, true);
  const owner = new Owner();
  const c = new Connection(new ScriptedSocket([]).asConn());
  assert.equal(
    new Http1Response(owner, c, 404, "HTTP/1.1 404 Not Found", { kind: "none" }, true, notAborted).ok,
    false,
  );
});

/** A socket that serves `prefix`, then `fill` bytes forever, counting what it served (a server that never stops). */
function endless(prefix: string, fill = 0x78) {
  const head = new TextEncoder().encode(prefix);
  const s = {
    served: 0,
    closes: 0,
    read(into: Uint8Array): Promise<number | null> {
      const n = s.served < head.length ? Math.min(into.length, head.length - s.served) : into.length;
      if (s.served < head.length) into.set(head.subarray(s.served, s.served + n));
      else into.fill(fill, 0, n);
      s.served += n;
      return Promise.resolve(n);
    },
    write: (b: Uint8Array) => Promise.resolve(b.length),
    close() {
      s.closes++;
    },
  };
  return s;
}

Deno.test("text(maxBytes) refuses a Content-Length over the limit before reading a byte of the body, and closes the connection", async () => {
  const t = response({ kind: "length", left: 512 * 1024 * 1024 }, ["x".repeat(100)]);
  await assert.rejects(t.res.text(1024), (err: Error) => {
    assert.ok(err instanceof BodyLimitError);
    assert.equal(err.declaredBytes, 512 * 1024 * 1024);
    assert.equal(err.message, "a response body of 536870912 bytes (Content-Length), over the limit of 1024 bytes");
    return true;
  });
  assert.deepEqual([t.owner.released, t.owner.destroyed], [0, 1]);
  assert.equal(t.c.end, 0, "nothing was read");
});

Deno.test("text(maxBytes) reads a body of exactly the limit, whatever its framing", async () => {
  for (
    const [framing, wire] of [
      [{ kind: "length", left: 8 }, "abcdefgh"],
      [{ kind: "chunked" }, "3\r\nabc\r\n5\r\ndefgh\r\n0\r\n\r\n"],
      [{ kind: "eof" }, "abcdefgh"],
    ] as [Framing, string][]
  ) {
    assert.equal(await response(framing, split(wire, 3)).res.text(8), "abcdefgh", framing.kind);
  }
});

Deno.test("text(maxBytes) refuses a chunked body that never ends once it passed the limit, having read little more", async () => {
  const limit = 64 * 1024;
  const sock = endless(`${(1024 ** 3).toString(16)}\r\n`);
  const owner = new Owner();
  const c = new Connection(sock as unknown as Deno.Conn);
  const res = new Http1Response(owner, c, 200, "HTTP/1.1 200 OK", { kind: "chunked" }, true, notAborted);
  await assert.rejects(
    res.text(limit),
    (err: Error) => err instanceof BodyLimitError && err.declaredBytes === undefined,
  );
  assert.deepEqual([owner.released, owner.destroyed], [0, 1]);
  assert.ok(sock.served <= limit + c.buf.length + 16, `served ${sock.served} bytes for a ${limit}-byte limit`);
  assert.ok(c.buf.length <= 8 * 1024, `the read buffer stayed small (${c.buf.length} bytes)`);
});

Deno.test("text(maxBytes) refuses a body without length that never ends (read until EOF) once it passed the limit", async () => {
  const limit = 10_000;
  const sock = endless("");
  const owner = new Owner();
  const c = new Connection(sock as unknown as Deno.Conn);
  const res = new Http1Response(owner, c, 200, "HTTP/1.1 200 OK", { kind: "eof" }, false, notAborted);
  await assert.rejects(res.text(limit), BodyLimitError);
  assert.equal(owner.destroyed, 1);
  assert.ok(sock.served <= limit + c.buf.length, `served ${sock.served} bytes for a ${limit}-byte limit`);
});

Deno.test("A chunked body whose trailer never ends fails with Http1Error instead of growing the buffer", async () => {
  const sock = endless("3\r\nabc\r\n0\r\nX-Trailer: ");
  const owner = new Owner();
  const c = new Connection(sock as unknown as Deno.Conn);
  const res = new Http1Response(owner, c, 200, "HTTP/1.1 200 OK", { kind: "chunked" }, true, notAborted);
  await assert.rejects(
    res.text(),
    (err: Error) => err instanceof Http1Error && /trailer larger than 65536 bytes/.test(err.message),
  );
  assert.equal(owner.destroyed, 1);
  assert.ok(c.buf.length <= 128 * 1024, `the buffer stayed bounded (${c.buf.length} bytes)`);
});

Deno.test("chunks(true) lends views that hold the exact body bytes, whatever the framing, read sizes and buffer size", async () => {
  const body = "0123456789abcdefghij".repeat(5);
  for (
    const [framing, wire] of [
      [{ kind: "length", left: body.length }, body],
      [
        { kind: "chunked" },
        `7\r\n${body.slice(0, 7)}\r\n${(body.length - 7).toString(16)}\r\n${body.slice(7)}\r\n0\r\n\r\n`,
      ],
      [{ kind: "eof" }, body],
    ] as [Framing, string][]
  ) {
    for (const piece of [1, 3, 16, wire.length]) {
      const t = response({ ...framing }, split(wire, piece), { bufferSize: 16, keepAlive: framing.kind !== "eof" });
      let got = "";
      for await (const v of t.res.chunks(true)) got += dec.decode(v); // used up before the next step
      assert.equal(got, body, `${framing.kind}, pieces of ${piece}`);
      assert.equal(t.owner.released + t.owner.destroyed, 1);
    }
  }
});

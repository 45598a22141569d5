// Unit tests for one HTTP/1.1 socket's buffer and the byte helpers, over a ScriptedSocket (dev/support/scripted_socket.ts).
import assert from "node:assert/strict";
import {
  Connection,
  indexOfBlankLine,
  indexOfCrlf,
  INITIAL_BUFFER,
  isClosedSocket,
  raced,
} from "./_http1_connection.ts";
import { ScriptedSocket } from "../../../dev/support/scripted_socket.ts";
import { concatBytes } from "../../util/mod.ts";
import { TestAbort } from "../../../dev/support/manual_abort.ts";

const enc = new TextEncoder();
const dec = new TextDecoder();

Deno.test("Connection.write() keeps writing until every byte went out on a socket that takes a few at a time", async () => {
  const sock = new ScriptedSocket([], 3);
  const c = new Connection(sock.asConn());
  await c.write(enc.encode("GET / HTTP/1.1\r\n\r\n"));
  assert.equal(dec.decode(concatBytes(sock.written)), "GET / HTTP/1.1\r\n\r\n");
  assert.equal(sock.writeCalls, 6);
});

Deno.test("Connection.fill() appends reads, grows a full buffer that holds unread bytes, and reports EOF", async () => {
  const big = "x".repeat(INITIAL_BUFFER + 10);
  const c = new Connection(new ScriptedSocket([big]).asConn());
  assert.equal(await c.fill(), true);
  assert.equal(c.end, INITIAL_BUFFER);
  assert.equal(await c.fill(), true, "the full buffer doubled instead of overwriting unread bytes");
  assert.equal(c.buf.length, INITIAL_BUFFER * 2);
  assert.equal(dec.decode(c.buf.subarray(c.start, c.end)), big);
  assert.equal(await c.fill(), false);
});

Deno.test("Connection.fill() moves unread bytes to the front of a full buffer instead of growing it", async () => {
  const c = new Connection(new ScriptedSocket(["abcdefgh", "ij"]).asConn());
  c.buf = new Uint8Array(8);
  await c.fill();
  c.start = 6; // "abcdef" consumed
  await c.fill();
  assert.equal(c.buf.length, 8);
  assert.equal(c.start, 0);
  assert.equal(dec.decode(c.buf.subarray(c.start, c.end)), "ghij");
});

Deno.test("Connection.fill() starts over at the front once every byte was consumed", async () => {
  const c = new Connection(new ScriptedSocket(["abcd", "ef"]).asConn());
  await c.fill();
  c.start = c.end;
  await c.fill();
  assert.deepEqual([c.start, c.end], [0, 2]);
  assert.equal(dec.decode(c.buf.subarray(0, 2)), "ef");
});

Deno.test("Connection.close() closes the socket once, however often it is called", () => {
  const sock = new ScriptedSocket([]);
  const c = new Connection(sock.asConn());
  c.close();
  c.close();
  assert.equal(c.closed, true);
  assert.equal(sock.closes, 1);
});

Deno.test("raced() resolves with the connection when no abort comes", async () => {
  const sock = new ScriptedSocket([]);
  assert.equal(await raced(Promise.resolve(sock), new TestAbort()), sock);
  assert.equal(sock.closes, 0);
});

Deno.test("raced() rejects with the abort reason and closes a connection that arrives after the abort", async () => {
  const reason = new Error("caller gave up");
  const abort = new TestAbort();
  let connect!: (c: ScriptedSocket) => void;
  const p = raced(new Promise<ScriptedSocket>((r) => connect = r), abort);
  abort.abort(reason);
  await assert.rejects(p, (err) => err === reason);
  const late = new ScriptedSocket([]);
  connect(late);
  await Promise.resolve();
  await Promise.resolve();
  assert.equal(late.closes, 1);
});

Deno.test("raced() rejects at once when already aborted, and closes the connection once it arrives", async () => {
  const abort = new TestAbort();
  abort.abort("gone");
  const sock = new ScriptedSocket([]);
  await assert.rejects(raced(Promise.resolve(sock), abort), (err) => err === "gone");
  await Promise.resolve();
  assert.equal(sock.closes, 1);
});

Deno.test("raced() passes a connect failure through when no abort came first", async () => {
  const failure = new Deno.errors.ConnectionRefused("refused");
  await assert.rejects(raced(Promise.reject(failure), new TestAbort()), (err) => err === failure);
});

Deno.test("isClosedSocket recognises resets, broken pipes, EOFs and rustls' missing close_notify, and nothing else", () => {
  assert.equal(isClosedSocket(new Deno.errors.ConnectionReset("x")), true);
  assert.equal(isClosedSocket(new Deno.errors.BrokenPipe("x")), true);
  assert.equal(isClosedSocket(new Deno.errors.ConnectionAborted("x")), true);
  assert.equal(isClosedSocket(new Deno.errors.UnexpectedEof("x")), true);
  assert.equal(isClosedSocket(new Error("peer closed connection without sending TLS close_notify")), true);
  assert.equal(isClosedSocket(new Deno.errors.ConnectionRefused("x")), false);
  assert.equal(isClosedSocket(new Error("certificate expired")), false);
  assert.equal(isClosedSocket("close_notify"), false);
});

Deno.test("indexOfCrlf and indexOfBlankLine find the first CRLF or CRLFCRLF within [from, to) only", () => {
  const b = enc.encode("ab\r\ncd\r\n\r\nef");
  assert.equal(indexOfCrlf(b, 0, b.length), 2);
  assert.equal(indexOfCrlf(b, 3, b.length), 6);
  assert.equal(indexOfCrlf(b, 0, 3), -1, "a CR at the end of the range is not a CRLF");
  assert.equal(indexOfBlankLine(b, 0, b.length), 6);
  assert.equal(indexOfBlankLine(b, 0, 9), -1);
  assert.equal(indexOfBlankLine(b, 7, b.length), -1);
});

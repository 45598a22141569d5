// Tests for the ScriptedSocket test fixture: reads replay the script split to fit, then EOF; writes are bounded.

import assert from "node:assert/strict";
import { ScriptedSocket } from "./scripted_socket.ts";

const dec = new TextDecoder();

Deno.test("ScriptedSocket.read() returns each piece in order, splitting one that does not fit, then EOF for good", async () => {
  const s = new ScriptedSocket(["abcde", new Uint8Array([0x66, 0x67])]);
  const buf = new Uint8Array(3);
  const got: string[] = [];
  for (let n = await s.read(buf); n !== null; n = await s.read(buf)) got.push(dec.decode(buf.subarray(0, n)));
  assert.deepEqual(got, ["abc", "de", "fg"]);
  assert.equal(await s.read(buf), null);
  assert.equal(await new ScriptedSocket([]).read(buf), null);
});

Deno.test("ScriptedSocket.write() takes at most perWrite bytes per call and keeps copies of what it took", async () => {
  const s = new ScriptedSocket([], 2);
  const bytes = new TextEncoder().encode("hello");
  assert.equal(await s.write(bytes), 2);
  bytes[0] = 0x78; // the socket kept a copy
  assert.equal(await s.write(bytes.subarray(2)), 2);
  assert.deepEqual(s.written.map((w) => dec.decode(w)), ["he", "ll"]);
  assert.equal(s.writeCalls, 2);
  assert.equal(await new ScriptedSocket([]).write(bytes), 5, "unbounded by default");
});

Deno.test("ScriptedSocket counts closes and is its own Deno.Conn", () => {
  const s = new ScriptedSocket([]);
  const conn = s.asConn();
  conn.close();
  conn.close();
  assert.equal(s.closes, 2);
  assert.equal(conn as unknown, s);
});

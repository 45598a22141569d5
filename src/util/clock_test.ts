// Unit tests for the virtual clock.
import assert from "node:assert/strict";
import { VirtualClock } from "./clock.ts";

Deno.test("VirtualClock fires timers in due order and only when advanced", async () => {
  const c = new VirtualClock(100);
  const fired: string[] = [];
  c.setTimer(30, () => fired.push("b"));
  c.setTimer(10, () => fired.push("a"));
  c.setTimer(30, () => fired.push("c"));
  await c.advance(5);
  assert.deepEqual(fired, []);
  await c.advance(30);
  assert.deepEqual(fired, ["a", "b", "c"]);
  assert.equal(c.now(), 135);
});

Deno.test("VirtualClock.sleep() resolves early on abort and leaves no timer", async () => {
  const c = new VirtualClock();
  const abort = new AbortController();
  let woke = false;
  const p = c.sleep(1000, abort.signal).then(() => (woke = true));
  await c.advance(10);
  assert.equal(woke, false);
  abort.abort();
  await p;
  assert.equal(woke, true);
  assert.equal(c.pending, 0);
});

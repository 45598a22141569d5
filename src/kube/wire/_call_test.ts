// Unit tests for one request's cancellation (caller signal, close, timer) on virtual time.
import assert from "node:assert/strict";
import { VirtualClock } from "../../util/mod.ts";
import { Call } from "./_call.ts";

Deno.test("A Call registers itself as live until end(), which also cancels its timer", async () => {
  const clock = new VirtualClock(0);
  const live = new Set<Call>();
  const call = new Call(clock, undefined, live);
  assert.ok(live.has(call));
  call.arm(100, "timeout");
  call.end();
  assert.equal(live.size, 0);
  await clock.advance(1000);
  assert.equal(call.why, undefined, "an ended call's timer never fires");
});

Deno.test("An armed timer aborts the call with its kind, runs the abort hooks once, and aborts a signal made later", async () => {
  const clock = new VirtualClock(0);
  const call = new Call(clock, undefined, new Set());
  let hooks = 0;
  call.onAbort(() => hooks++);
  call.arm(100, "deadline");
  await clock.advance(99);
  assert.equal(call.why, undefined);
  await clock.advance(1);
  assert.equal(call.why, "deadline");
  assert.equal(hooks, 1);
  assert.match(String((call.aborted as Error).message), /request deadline/);
  call.close(); // a second abort changes nothing
  assert.equal(call.why, "deadline");
  assert.equal(hooks, 1);
  assert.equal(call.signal.aborted, true);
  call.onAbort(() => hooks++);
  assert.equal(hooks, 1, "a hook registered after the abort is not run");
});

Deno.test("Re-arming replaces the earlier timer, and disarm() stops it", async () => {
  const clock = new VirtualClock(0);
  const call = new Call(clock, undefined, new Set());
  call.arm(100, "timeout");
  await clock.advance(50);
  call.arm(100, "deadline");
  assert.equal(call.armedMs, 100);
  await clock.advance(60);
  assert.equal(call.why, undefined, "the first timer was replaced");
  await clock.advance(40);
  assert.equal(call.why, "deadline");
  const other = new Call(clock, undefined, new Set());
  other.arm(10, "timeout");
  other.disarm();
  await clock.advance(100);
  assert.equal(other.why, undefined);
});

Deno.test("The caller's signal aborts the call with the caller's own reason, also when already aborted", () => {
  const clock = new VirtualClock(0);
  const ac = new AbortController();
  const call = new Call(clock, ac.signal, new Set());
  const reason = new Error("reconcile timed out");
  ac.abort(reason);
  assert.equal(call.why, "caller");
  assert.equal(call.byCaller, true);
  assert.equal(call.aborted, reason);
  assert.equal(call.signal.reason, reason);
  const early = new Call(clock, AbortSignal.abort(reason), new Set());
  assert.equal(early.byCaller, true);
  assert.equal(early.aborted, reason);
});

Deno.test("A caller signal aborted after end() no longer aborts the call", () => {
  const ac = new AbortController();
  const call = new Call(new VirtualClock(0), ac.signal, new Set());
  call.end();
  ac.abort();
  assert.equal(call.why, undefined);
});

Deno.test("race() resolves like its promise, or rejects with the abort reason as soon as the call is aborted", async () => {
  const clock = new VirtualClock(0);
  const call = new Call(clock, undefined, new Set());
  assert.equal(await call.race(Promise.resolve(7)), 7);
  const pending = call.race(new Promise<never>(() => {}));
  call.close();
  await assert.rejects(pending, (err: Error) => err.name === "AbortError" && /request closed/.test(err.message));
  await assert.rejects(call.race(Promise.resolve(1)), (err) => err === call.aborted);
  assert.equal(call.why, "closed");
});

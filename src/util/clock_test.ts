// Unit tests for the virtual clock.
import assert from "node:assert/strict";
import { COARSE_FROM_MS, CoarseTimers, SLOT_MS, SystemClock, type Timer, VirtualClock } from "./clock.ts";

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

/**
 * Resolves once `done()` holds, checking every 10 ms. The 5 s limit is a hang guard, not a speed check: the timers
 * waited for are due within 260 ms (about 10× less; see the figure line).
 */
async function until(done: () => boolean, what: string): Promise<void> {
  for (const deadline = Date.now() + 5_000; !done();) {
    if (Date.now() > deadline) throw new Error(`hang guard: ${what} did not happen within 5 s`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

Deno.test("CoarseTimers: never early, in due order, cancelled ones never run, nothing left armed", async () => {
  const timers = new CoarseTimers();
  const fired: [string, number][] = [];
  const due: Record<string, number> = {};
  const add = (name: string, ms: number) => {
    due[name] = Date.now() + ms;
    return timers.add(ms, () => fired.push([name, Date.now()]));
  };
  add("b", 260);
  add("a", 120);
  const c = add("c", 180);
  add("d", 125); // same slot as "a" or the next
  c.cancel();
  assert.equal(timers.size, 3);
  // "b" is due last, so once it ran every slot up to its own has fired, the cancelled "c" (180 ms) included.
  await until(() => fired.some(([n]) => n === "b"), `timer "b"`);
  assert.deepEqual(fired.map(([n]) => n).sort(), ["a", "b", "d"], "the cancelled timer never ran");
  for (const [name, at] of fired) assert.ok(at >= due[name], `${name} fired ${due[name] - at} ms early`);
  assert.ok(fired.findIndex(([n]) => n === "b") === 2, "b (the longest) fires last");
  assert.equal(timers.size, 0);
  // How late they ran depends on the event loop (a busy machine delays every setTimeout): a figure, not a check.
  const late = fired.map(([name, at]) => at - due[name]);
  console.log(`figure: coarse timers ran ${Math.min(...late)}–${Math.max(...late)} ms after due (SLOT_MS ${SLOT_MS})`);
  // Deno.test's sanitizers fail this test if a setTimeout is still armed.
});

Deno.test("CoarseTimers: cancelling the earliest timer re-arms for the next, cancelling all disarms", async () => {
  const timers = new CoarseTimers();
  const fired: string[] = [];
  const early = timers.add(50, () => fired.push("early"));
  timers.add(150, () => fired.push("late"));
  early.cancel();
  // The cancelled one was due first: had it stayed, it would have run before "late".
  await until(() => fired.includes("late"), `timer "late"`);
  assert.deepEqual(fired, ["late"]);
  const t1 = timers.add(10_000, () => fired.push("never"));
  const t2 = timers.add(20_000, () => fired.push("never"));
  t2.cancel();
  t1.cancel();
  assert.equal(timers.size, 0);
  // No armed setTimeout may remain for the 10 s slot: the sanitizer would report a leaked timer.
});

Deno.test("CoarseTimers: a slot emptied by cancels and filled again fires its new timer once, in order with the rest", async () => {
  // Every timer is set at one instant, so their order is their delays' even when a loaded machine is slow between the
  // adds (40 ms of it once put "first" after "again"); they fire on real time.
  let frozen: number | undefined = Date.now();
  const timers = new CoarseTimers(() => frozen ?? Date.now());
  const fired: string[] = [];
  const first = timers.add(100, () => fired.push("cancelled"));
  first.cancel();
  timers.add(100, () => fired.push("again")); // the same slot, now holding only this one
  // Many slots set and cancelled out of order: the heap keeps their numbers until they surface.
  const cancelled = Array.from({ length: 50 }, (_, i) => timers.add(20 + i * 7, () => fired.push("never")));
  for (const t of cancelled.reverse()) t.cancel();
  timers.add(60, () => fired.push("first"));
  timers.add(300, () => fired.push("last"));
  first.cancel(); // cancelling twice is a no-op
  frozen = undefined;
  assert.equal(timers.size, 3);
  await until(() => fired.includes("last"), `timer "last"`);
  assert.deepEqual(fired, ["first", "again", "last"]);
  assert.equal(timers.size, 0);
});

Deno.test("SystemClock.setTimer() uses coarse timers from COARSE_FROM_MS and exact ones below", () => {
  const clock = new SystemClock();
  // Records the delay of every runtime timer armed while the clock's timers are set.
  const armed: number[] = [];
  const realSetTimeout = globalThis.setTimeout;
  const counting = (fn: () => void, ms?: number) => {
    armed.push(ms ?? 0);
    return realSetTimeout(fn, ms);
  };
  let long: Timer[] = [];
  let short: Timer[] = [];
  globalThis.setTimeout = counting as typeof setTimeout;
  try {
    // Exact timers arm one runtime timer each, with the delay asked for.
    short = [clock.setTimer(10, () => {}), clock.setTimer(11, () => {})];
    assert.deepEqual(armed, [10, 11], "each short timer is its own setTimeout with its own delay");
    armed.length = 0;
    // Coarse ones share the single setTimeout of the earliest slot: two long timers arm at most one, never
    // with either exact delay.
    long = [clock.setTimer(COARSE_FROM_MS + 1, () => {}), clock.setTimer(COARSE_FROM_MS + 2, () => {})];
    assert.ok(armed.length <= 1, `two coarse timers armed ${armed.length} setTimeouts: ${armed.join(", ")}`);
    assert.ok(!armed.includes(COARSE_FROM_MS + 2), `the second coarse timer armed its own: ${armed.join(", ")}`);
  } finally {
    globalThis.setTimeout = realSetTimeout;
    for (const t of [...long, ...short]) t.cancel();
  }
});

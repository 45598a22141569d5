import assert from "node:assert/strict";
import { describeSeen, eventually, EventuallyTimeoutError } from "./eventually.ts";

function virtualClock() {
  let t = 0;
  return { now: () => t, sleep: (ms: number) => Promise.resolve(void (t += ms)) };
}

Deno.test("eventually resolves with the first value that is not undefined, null or false, after errors", async () => {
  const seen: unknown[] = [undefined, null, false, new Error("404"), { name: "x" }];
  let i = 0;
  const value = await eventually(() => {
    const next = seen[i++];
    if (next instanceof Error) throw next;
    return next;
  }, { ...virtualClock(), timeoutMs: 10_000 });
  assert.deepEqual(value, { name: "x" });
  assert.equal(i, 5);
});

Deno.test("eventually's timeout message names what it waited for and the last value seen", async () => {
  const clock = virtualClock();
  const err = await eventually(() => undefined, { ...clock, timeoutMs: 1_000, what: "x" })
    .then(() => undefined, (e) => e);
  assert.ok(err instanceof EventuallyTimeoutError);
  assert.match(err.message, /waiting for x: gave up after 1 s and \d+ attempt\(s\); last value undefined$/);
  const stale = await eventually(() => false as const, { ...clock, timeoutMs: 500 }).catch((e) => e);
  assert.match(stale.message, /last value false$/);
});

Deno.test("eventually's timeout message carries the last error (name and message) and keeps it as the cause", async () => {
  let n = 0;
  const err = await eventually(() => {
    throw new RangeError(`not found: configmaps "x" (attempt ${++n})`);
  }, { ...virtualClock(), timeoutMs: 1_000, intervalMs: 100 }).catch((e) => e);
  assert.ok(err instanceof EventuallyTimeoutError);
  assert.equal(err.attempts, n);
  assert.ok(n >= 10 && n <= 12, `${n} attempts in 1 s at 100 ms`);
  assert.match(err.message, new RegExp(`last error RangeError: not found: configmaps "x" \\(attempt ${n}\\)$`));
  assert.ok(err.cause instanceof RangeError);
});

Deno.test("what eventually shows of a value is one bounded line", () => {
  const line = describeSeen({ value: { data: "a\nb".repeat(1000) } });
  assert.ok(line.length < 700, `${line.length}`);
  assert.doesNotMatch(line, /\n/);
  assert.match(describeSeen({ error: "plain" }), /^last error thrown plain$/);
});

Deno.test("eventually stops at once when its signal is aborted", async () => {
  const controller = new AbortController();
  controller.abort(new Error("cancelled"));
  await assert.rejects(eventually(() => undefined, { signal: controller.signal }), /cancelled/);
});

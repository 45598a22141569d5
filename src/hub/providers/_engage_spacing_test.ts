// Unit tests of the engage spacing on virtual time: first engages at once, later ones spaced, one due per burst.
import assert from "node:assert/strict";
import { VirtualClock } from "../../util/mod.ts";
import { EngageSpacing } from "./_engage_spacing.ts";

function spacing(intervalMs = 3000) {
  const clock = new VirtualClock(1_000_000);
  const due: string[] = [];
  const s = new EngageSpacing({ intervalMs, clock, due: (name) => due.push(name) });
  return { clock, due, s };
}

Deno.test("EngageSpacing lets a name never engaged, or engaged long enough ago, be engaged at once", async () => {
  const { clock, s } = spacing();
  assert.equal(s.wait("a"), 0);
  s.engaged("a");
  assert.equal(s.wait("a"), 3000);
  await clock.advance(1000);
  assert.equal(s.wait("a"), 2000);
  await clock.advance(2000);
  assert.equal(s.wait("a"), 0);
  assert.equal(s.wait("b"), 0, "another name is not held up by a's engage");
});

Deno.test("EngageSpacing schedules one due per burst of changes, when the interval has passed, and counts them", async () => {
  const { clock, due, s } = spacing();
  s.engaged("a");
  for (let i = 0; i < 100; i++) {
    await clock.advance(10);
    assert.ok(s.wait("a") > 0);
    s.defer("a");
  }
  assert.deepEqual(due, [], "nothing is due before the interval has passed");
  await clock.advance(1999);
  assert.deepEqual(due, []);
  await clock.advance(1);
  assert.deepEqual(due, ["a"], "one due for the hundred changes");
  assert.equal(s.wait("a"), 0);
  assert.equal(s.engaged("a"), 100, "the engage learns how many changes the burst had");
  assert.equal(s.wait("a"), 3000);
  await clock.advance(10_000);
  assert.deepEqual(due, ["a"], "no further due without a further change");
});

Deno.test("EngageSpacing forgets names whose interval passed, so its memory follows recent engages only", async () => {
  const { clock, s } = spacing();
  for (let i = 0; i < 1000; i++) s.engaged(`c${i}`);
  assert.equal(s.size, 1000);
  await clock.advance(3000);
  assert.equal(s.wait("x"), 0);
  assert.equal(s.size, 0);
});

Deno.test("EngageSpacing.stop() cancels the waiting timers", async () => {
  const { clock, due, s } = spacing();
  s.engaged("a");
  s.defer("a");
  assert.equal(clock.pending, 1);
  s.stop();
  await clock.advance(10_000);
  assert.deepEqual(due, []);
  assert.equal(s.size, 0);
});

Deno.test("EngageSpacing with an interval of 0 never makes a name wait", () => {
  const { s } = spacing(0);
  s.engaged("a");
  assert.equal(s.wait("a"), 0);
  assert.equal(s.size, 0);
});

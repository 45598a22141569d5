// Unit tests of the health memo: fresh while building is cheap, shared for a while once it is costly.
import assert from "node:assert/strict";
import { HealthMemo } from "./_health_memo.ts";

/** A memo over a build that takes `cost` ms of the fake time and counts its calls. */
function memo(cost: { ms: number }) {
  let now = 0;
  let builds = 0;
  const m = new HealthMemo(() => {
    now += cost.ms;
    return ++builds;
  }, { now: () => now, minCostMs: 5, factor: 10, maxAgeMs: 2000 });
  return { m, advance: (ms: number) => (now += ms), builds: () => builds };
}

Deno.test("HealthMemo builds afresh on every call while a build costs less than minCostMs", () => {
  const t = memo({ ms: 1 });
  assert.deepEqual([t.m.get(), t.m.get(), t.m.get()], [1, 2, 3]);
});

Deno.test("HealthMemo shares a costly build for factor × its cost, then builds again", () => {
  const cost = { ms: 100 };
  const t = memo(cost);
  assert.equal(t.m.get(), 1);
  t.advance(999);
  assert.equal(t.m.get(), 1, "999 ms after a 100 ms build: shared");
  t.advance(1);
  assert.equal(t.m.get(), 2, "1,000 ms after: built again");
  cost.ms = 1;
  t.advance(5000);
  assert.equal(t.m.get(), 3);
  assert.equal(t.m.get(), 4, "cheap again: fresh every time");
});

Deno.test("HealthMemo never shares a build for longer than maxAgeMs, however costly", () => {
  const t = memo({ ms: 1000 });
  assert.equal(t.m.get(), 1);
  t.advance(1999);
  assert.equal(t.m.get(), 1);
  t.advance(1);
  assert.equal(t.m.get(), 2);
});

Deno.test("HealthMemo keeps nothing of a build that throws", () => {
  let fail = true;
  let now = 0;
  const m = new HealthMemo(() => {
    now += 100;
    if (fail) throw new Error("boom");
    return "ok";
  }, { now: () => now });
  assert.throws(() => m.get(), /boom/);
  fail = false;
  assert.equal(m.get(), "ok");
});

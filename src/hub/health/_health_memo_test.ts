// Unit tests of the probe memo: fresh below a size, shared for a bounded while above it.
import assert from "node:assert/strict";
import { HealthMemo } from "./_health_memo.ts";

/** A memo over a build that describes `size.clusters` clusters and counts its calls; time is `advance`d by hand. */
function memo(size: { clusters: number }) {
  let now = 0;
  let builds = 0;
  const m = new HealthMemo(() => ({ build: ++builds, clusters: size.clusters }), {
    size: (v) => v.clusters,
    minClusters: 500,
    maxAgeMs: 1000,
    now: () => now,
  });
  return { get: () => m.get().build, advance: (ms: number) => (now += ms) };
}

Deno.test("HealthMemo builds afresh on every call below minClusters, however close together", () => {
  const t = memo({ clusters: 499 });
  assert.deepEqual([t.get(), t.get(), t.get()], [1, 2, 3]);
});

Deno.test("HealthMemo shares a value of many clusters for maxAgeMs, then builds again", () => {
  const size = { clusters: 2000 };
  const t = memo(size);
  assert.equal(t.get(), 1);
  t.advance(999);
  assert.equal(t.get(), 1, "999 ms later: shared");
  t.advance(1);
  assert.equal(t.get(), 2, "1,000 ms later: built again");
  size.clusters = 3;
  t.advance(1000);
  assert.equal(t.get(), 3);
  assert.equal(t.get(), 4, "few clusters again: fresh every time");
});

Deno.test("HealthMemo keeps nothing of a build that throws", () => {
  let fail = true;
  const m = new HealthMemo(() => {
    if (fail) throw new Error("boom");
    return 10_000;
  }, { size: (v) => v });
  assert.throws(() => m.get(), /boom/);
  fail = false;
  assert.equal(m.get(), 10_000);
});

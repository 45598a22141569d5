// Unit tests of the scaling of the limits not given (pure).

import assert from "node:assert/strict";
import { CONCURRENCY_PER_CLUSTER, DEFAULT_LIMITS, MAX_SCALED_CONCURRENCY, scaledLimit } from "./hub_limits.ts";

Deno.test("scaledLimit() gives qps and burst per engaged cluster, and counts no cluster as one", () => {
  for (const n of [1, 3, 40]) {
    assert.equal(scaledLimit("qps", n), DEFAULT_LIMITS.qps * n);
    assert.equal(scaledLimit("burst", n), DEFAULT_LIMITS.burst * n);
  }
  assert.equal(scaledLimit("qps", 0), scaledLimit("qps", 1));
  assert.equal(scaledLimit("burst", 0), scaledLimit("burst", 1));
});

Deno.test("scaledLimit() keeps the concurrency floor up to four clusters, then raises it per cluster up to its cap", () => {
  const floor = DEFAULT_LIMITS.concurrency;
  for (let n = 0; n <= floor / CONCURRENCY_PER_CLUSTER; n++) assert.equal(scaledLimit("concurrency", n), floor);
  assert.equal(scaledLimit("concurrency", 5), 5 * CONCURRENCY_PER_CLUSTER);
  assert.equal(scaledLimit("concurrency", 10), 10 * CONCURRENCY_PER_CLUSTER);
  const atCap = MAX_SCALED_CONCURRENCY / CONCURRENCY_PER_CLUSTER;
  assert.equal(scaledLimit("concurrency", atCap), MAX_SCALED_CONCURRENCY);
  assert.equal(scaledLimit("concurrency", atCap * 10), MAX_SCALED_CONCURRENCY);
  let last = 0;
  for (let n = 1; n <= atCap * 2; n++) {
    const c = scaledLimit("concurrency", n);
    assert.ok(c >= last, `never lower with more clusters (${n})`);
    last = c;
  }
});

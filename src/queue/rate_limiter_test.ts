import assert from "node:assert/strict";
import { VirtualClock } from "../util/clock.ts";
import {
  BucketLimiter,
  defaultControllerRateLimiter,
  ItemExponentialLimiter,
  MaxOfLimiter,
  PerClusterLimiter,
  type RateLimiter,
  TokenBucket,
} from "./rate_limiter.ts";
import type { QueueKey } from "./key.ts";

/** A queue key written as `cluster/operator/namespace/name` (test fixtures only; the queue never parses strings). */
function k(s: string): QueueKey {
  const [name, namespace, operator, ...cluster] = s.split("/").reverse();
  return { operator, request: { cluster: cluster.reverse().join("/"), namespace, name } };
}

Deno.test("ItemExponentialLimiter.when() doubles from 5 ms for each failure of the same key", () => {
  const l = new ItemExponentialLimiter();
  assert.deepEqual([1, 2, 3, 4, 5].map(() => l.when(k("c/op/ns/a"))), [5, 10, 20, 40, 80]);
  assert.deepEqual(l.retries(k("c/op/ns/a")), 5);
});

Deno.test("ItemExponentialLimiter.when() stops growing at maxMs, 1000 s by default", () => {
  const l = new ItemExponentialLimiter();
  let last = 0;
  for (let i = 0; i < 30; i++) last = l.when(k("c/op/ns/a"));
  assert.deepEqual(last, 1_000_000);
  const capped = new ItemExponentialLimiter({ baseMs: 100, maxMs: 300_000 });
  for (let i = 0; i < 20; i++) last = capped.when(k("c/op/ns/a"));
  assert.deepEqual(last, 300_000);
});

Deno.test("ItemExponentialLimiter.when() stays finite after thousands of failures", () => {
  const l = new ItemExponentialLimiter({ maxMs: 60_000 });
  let last = 0;
  for (let i = 0; i < 5_000; i++) last = l.when(k("c/op/ns/a"));
  assert.deepEqual(last, 60_000);
});

Deno.test("ItemExponentialLimiter keeps each key's failures apart and forget() starts a key over", () => {
  const l = new ItemExponentialLimiter();
  l.when(k("c/op/ns/a"));
  l.when(k("c/op/ns/a"));
  assert.deepEqual(l.when(k("c/op/ns/b")), 5);
  assert.deepEqual(l.when(k("c/op/ns/a")), 20);
  l.forget(k("c/op/ns/a"));
  assert.deepEqual(l.retries(k("c/op/ns/a")), 0);
  assert.deepEqual(l.when(k("c/op/ns/a")), 5);
  assert.deepEqual(l.size, 2);
});

Deno.test("ItemExponentialLimiter rejects a non-positive base or a cap below the base", () => {
  assert.throws(() => new ItemExponentialLimiter({ baseMs: 0 }), RangeError);
  assert.throws(() => new ItemExponentialLimiter({ baseMs: 10, maxMs: 5 }), /maxMs must be finite and at least/);
  assert.throws(() => new ItemExponentialLimiter({ maxMs: Infinity }), RangeError);
});

Deno.test("TokenBucket.take() allows a full burst, then spaces tokens 1/qps apart", () => {
  const clock = new VirtualClock();
  const b = new TokenBucket(10, 3, { clock });
  assert.deepEqual([b.take(), b.take(), b.take()], [0, 0, 0]);
  assert.deepEqual([b.take(), b.take(), b.take()], [100, 200, 300]);
});

Deno.test("TokenBucket refills over time but never beyond its burst", async () => {
  const clock = new VirtualClock();
  const b = new TokenBucket(10, 2, { clock });
  b.take();
  b.take();
  assert.deepEqual(b.take(), 100);
  await clock.advance(100); // the reserved token is used now
  assert.deepEqual(b.available(), 0);
  await clock.advance(150);
  assert.deepEqual(b.available(), 1.5);
  await clock.advance(60_000);
  assert.deepEqual(b.available(), 2);
  assert.deepEqual([b.take(), b.take(), b.take()], [0, 0, 100]);
});

Deno.test("TokenBucket.tryTake() takes a token only when one is available and reserves nothing otherwise", async () => {
  const clock = new VirtualClock();
  const b = new TokenBucket(2, 1, { clock });
  assert.deepEqual(b.tryTake(), true);
  assert.deepEqual(b.tryTake(), false);
  assert.deepEqual(b.tryTake(), false);
  await clock.advance(499);
  assert.deepEqual(b.tryTake(), false);
  await clock.advance(1);
  assert.deepEqual(b.tryTake(), true);
  assert.deepEqual(b.take(), 500, "failed tryTake calls did not reserve tokens");
});

Deno.test("TokenBucket.wait() resolves true once the clock reaches the reserved token", async () => {
  const clock = new VirtualClock();
  const b = new TokenBucket(10, 1, { clock });
  assert.deepEqual(await b.wait(), true);
  const order: string[] = [];
  const first = b.wait().then((ok) => order.push(`first:${ok}@${clock.now()}`));
  const second = b.wait().then((ok) => order.push(`second:${ok}@${clock.now()}`));
  await clock.advance(99);
  assert.deepEqual(order, []);
  await clock.advance(101);
  await Promise.all([first, second]);
  assert.deepEqual(order, ["first:true@100", "second:true@200"]);
  assert.deepEqual(clock.pending, 0);
});

Deno.test("TokenBucket.wait() returns false when aborted and gives its token back", async () => {
  const clock = new VirtualClock();
  const b = new TokenBucket(10, 1, { clock });
  b.take();
  const ac = new AbortController();
  const waiting = b.wait(ac.signal);
  await clock.advance(50);
  ac.abort();
  assert.deepEqual(await waiting, false);
  assert.deepEqual(clock.pending, 0);
  await clock.advance(50);
  assert.deepEqual(b.tryTake(), true, "the aborted reservation no longer holds the token due at 100 ms");
});

Deno.test("TokenBucket.wait() returns false at once for an already aborted signal", async () => {
  const clock = new VirtualClock();
  const b = new TokenBucket(1, 1, { clock });
  assert.deepEqual(await b.wait(AbortSignal.abort()), false);
  assert.deepEqual(b.tryTake(), true);
});

Deno.test("TokenBucket rejects a non-positive qps and a burst below one", () => {
  assert.throws(() => new TokenBucket(0, 1), /qps must be positive, got 0/);
  assert.throws(() => new TokenBucket(-1, 1), RangeError);
  assert.throws(() => new TokenBucket(1, 0), /burst must be an integer of at least 1, got 0/);
  assert.throws(() => new TokenBucket(1, 1.5), RangeError);
});

Deno.test("TokenBucket with infinite qps never waits", async () => {
  const clock = new VirtualClock();
  const b = new TokenBucket(Infinity, 1, { clock });
  for (let i = 0; i < 1000; i++) assert.deepEqual(b.take(), 0);
  assert.deepEqual(b.tryTake(), true);
  assert.deepEqual(await b.wait(), true);
  assert.deepEqual(b.available(), Infinity);
});

Deno.test("TokenBucket can serve as a global limit and a per-cluster limit at once", async () => {
  const clock = new VirtualClock();
  const global = new TokenBucket(4, 1, { clock });
  const perCluster = new Map([["prod", new TokenBucket(1, 1, { clock })], ["dev", new TokenBucket(1, 1, { clock })]]);
  const grants: string[] = [];
  const call = async (cluster: string) => {
    await perCluster.get(cluster)!.wait();
    await global.wait();
    grants.push(`${cluster}@${clock.now()}`);
  };
  const calls = [call("prod"), call("prod"), call("dev"), call("dev")];
  await clock.advance(2_000);
  await Promise.all(calls);
  assert.deepEqual(grants, ["prod@0", "dev@250", "prod@1000", "dev@1250"]);
});

Deno.test("BucketLimiter.when() returns the bucket's wait and keeps no per-key state", () => {
  const clock = new VirtualClock();
  const l = new BucketLimiter(new TokenBucket(10, 1, { clock }));
  assert.deepEqual(l.when(k("c/op/ns/a")), 0);
  assert.deepEqual(l.when(k("c/op/ns/b")), 100);
  assert.deepEqual(l.retries(k("c/op/ns/a")), 0);
  l.forget(k("c/op/ns/a"));
  assert.deepEqual(l.when(k("c/op/ns/a")), 200);
});

Deno.test("MaxOfLimiter.when() returns the largest delay and forget() reaches every limiter", () => {
  const clock = new VirtualClock();
  const items = new ItemExponentialLimiter();
  const l = new MaxOfLimiter(items, new BucketLimiter(new TokenBucket(10, 2, { clock })));
  assert.deepEqual([l.when(k("c/op/ns/a")), l.when(k("c/op/ns/a")), l.when(k("c/op/ns/a"))], [5, 10, 100]);
  assert.deepEqual(l.retries(k("c/op/ns/a")), 3);
  l.forget(k("c/op/ns/a"));
  assert.deepEqual(items.retries(k("c/op/ns/a")), 0);
  assert.throws(() => new MaxOfLimiter(), RangeError);
});

Deno.test("PerClusterLimiter gives each cluster its own limiter and forgetCluster() drops it", () => {
  const made: string[] = [];
  const l = new PerClusterLimiter((cluster) => {
    made.push(cluster);
    return new ItemExponentialLimiter();
  });
  l.when(k("prod/op/ns/a"));
  l.when(k("prod/op/ns/a"));
  assert.deepEqual(l.when(k("dev/op/ns/a")), 5);
  assert.deepEqual(l.retries(k("prod/op/ns/a")), 2);
  assert.deepEqual(made, ["prod", "dev"]);
  l.forgetCluster("prod");
  assert.deepEqual(l.clusters(), ["dev"]);
  assert.deepEqual(l.retries(k("prod/op/ns/a")), 0);
  assert.deepEqual(l.when(k("prod/op/ns/a")), 5);
});

Deno.test("defaultControllerRateLimiter() caps per-item backoff at 5 minutes by default", () => {
  const l = defaultControllerRateLimiter({ clock: new VirtualClock(), burst: 1_000 });
  const delays: number[] = [];
  for (let i = 0; i < 20; i++) delays.push(l.when(k("prod/op/ns/a")));
  assert.deepEqual(delays[0], 5);
  assert.deepEqual(delays.at(-1), 300_000);
  assert.deepEqual(l.retries(k("prod/op/ns/a")), 20);
  l.forget(k("prod/op/ns/a"));
  assert.deepEqual(l.retries(k("prod/op/ns/a")), 0);
});

/** Delays of `n` first failures of distinct keys in `cluster`. */
function firstFailures(l: RateLimiter, cluster: string, n: number): number[] {
  return Array.from({ length: n }, (_, i) => l.when(k(`${cluster}/op/ns/k${i}`)));
}

Deno.test("defaultControllerRateLimiter() allows a burst of 100 retries, then 10 per second, per cluster", () => {
  const l = defaultControllerRateLimiter({ clock: new VirtualClock() });
  const prod = firstFailures(l, "prod", 102);
  assert.deepEqual(prod.slice(0, 100), Array(100).fill(5));
  assert.deepEqual(prod.slice(100), [100, 200]);
  // A retry storm in prod does not use up dev's budget.
  assert.deepEqual(firstFailures(l, "dev", 3), [5, 5, 5]);
});

Deno.test("defaultControllerRateLimiter() with a global bucket shares it across clusters, like client-go", () => {
  const l = defaultControllerRateLimiter({ clock: new VirtualClock(), bucketScope: "global", maxMs: 1_000_000 });
  firstFailures(l, "prod", 100);
  assert.deepEqual(firstFailures(l, "dev", 2), [100, 200]);
});

Deno.test("TokenBucket.setRate() keeps the tokens already taken and refills them at the new rate", async () => {
  const clock = new VirtualClock();
  const b = new TokenBucket(10, 2, { clock });
  assert.deepEqual([b.take(), b.take(), b.take()], [0, 0, 100]);
  // Three taken: of a burst of 5 two are left, then one every 10 ms.
  b.setRate(100, 5);
  assert.deepEqual([b.qps, b.burst], [100, 5]);
  assert.deepEqual([b.take(), b.take(), b.take()], [0, 0, 10]);
  await clock.advance(60_000);
  assert.deepEqual(b.available(), 5);
  assert.deepEqual([b.take(), b.take(), b.take(), b.take(), b.take(), b.take()], [0, 0, 0, 0, 0, 10]);
  assert.throws(() => b.setRate(0, 1), /cannot change TokenBucket's rate: qps must be positive, got 0/);
});

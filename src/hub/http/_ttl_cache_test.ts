// Unit tests of TtlCache on virtual time: expiry per entry and a hard bound on size.
import assert from "node:assert/strict";
import { VirtualClock } from "../../util/mod.ts";
import { TtlCache } from "./_ttl_cache.ts";

Deno.test("TtlCache returns a value until its own deadline and never after", async () => {
  const clock = new VirtualClock();
  const c = new TtlCache<string>(clock, 10);
  c.set("allowed", "yes", 60_000);
  c.set("denied", "no", 10_000);
  await clock.advance(9_999);
  assert.equal(c.get("denied"), "no");
  await clock.advance(1);
  assert.equal(c.get("denied"), undefined, "denied answers expire after 10 s");
  assert.equal(c.get("allowed"), "yes");
  await clock.advance(50_000);
  assert.equal(c.get("allowed"), undefined, "allowed answers expire after 60 s");
  assert.equal(c.size, 0);
});

Deno.test("TtlCache never holds more than its bound: expired entries go first, then the oldest", async () => {
  const clock = new VirtualClock();
  const c = new TtlCache<number>(clock, 3);
  c.set("a", 1, 1_000);
  c.set("b", 2, 60_000);
  c.set("c", 3, 60_000);
  await clock.advance(1_000);
  c.set("d", 4, 60_000);
  assert.equal(c.size, 3);
  assert.deepEqual(["b", "c", "d"].map((k) => c.get(k)), [2, 3, 4], "the expired entry made room");
  for (let i = 0; i < 1000; i++) c.set(`flood-${i}`, i, 60_000);
  assert.equal(c.size, 3);
  assert.equal(c.get("b"), undefined, "the oldest were evicted");
  assert.equal(c.get("flood-999"), 999);
  assert.throws(() => new TtlCache(clock, 0), /positive whole number, got 0/);
});

// Unit tests for Backoff.
import assert from "node:assert/strict";
import { Backoff } from "./backoff.ts";

Deno.test("Backoff.next() doubles from 800 ms to the 30 s cap without jitter", () => {
  const b = new Backoff({ random: () => 0 });
  const delays = Array.from({ length: 8 }, (_, i) => b.next(i));
  assert.deepEqual(delays, [800, 1600, 3200, 6400, 12800, 25600, 30000, 30000]);
});

Deno.test("Backoff.next() adds at most 20% jitter by default", () => {
  const b = new Backoff({ random: () => 0.999 });
  assert.ok(b.next(0) <= 960 && b.next(1) <= 1920);
});

Deno.test("Backoff.next() adds the random fraction of 20% of each delay on top of it", () => {
  const b = new Backoff({ random: () => 0.5 });
  const delays = Array.from({ length: 8 }, (_, i) => b.next(i));
  // 10% more than the un-jittered 800, 1600, ..., 30000 sequence: a Backoff without jitter returns that sequence.
  assert.deepEqual(delays, [880, 1760, 3520, 7040, 14080, 28160, 33000, 33000]);
});

Deno.test("Backoff.next() with a seeded random source spreads delays above the un-jittered value, within 20%", () => {
  // A small linear congruential generator: seeded, so a failure replays.
  let seed = 27;
  const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
  const base = [800, 1600, 3200, 6400, 12800, 25600, 30000, 30000];
  const spread = new Set<number>();
  for (let run = 0; run < 200; run++) {
    const b = new Backoff({ random });
    base.forEach((plain, i) => {
      const delay = b.next(i);
      assert.ok(delay >= plain && delay <= Math.round(plain * 1.2), `delay ${i} was ${delay}, base ${plain}`);
      if (i === 0) spread.add(delay);
    });
  }
  // Jitter exists: 200 first delays take many values, and most of them lie above 800.
  assert.ok(spread.size > 50, `only ${spread.size} distinct first delays: ${[...spread].join(", ")}`);
  assert.ok([...spread].filter((d) => d > 800).length > 50, `first delays: ${[...spread].join(", ")}`);
});

Deno.test("Backoff starts over after two minutes without failures", () => {
  const b = new Backoff({ random: () => 0 });
  b.next(0);
  b.next(1000);
  assert.equal(b.next(2000), 3200);
  assert.equal(b.next(2000 + 120_000), 800);
});

Deno.test("Backoff.reset() forgets past failures", () => {
  const b = new Backoff({ random: () => 0 });
  b.next(0);
  b.next(1);
  b.reset();
  assert.equal(b.next(2), 800);
});

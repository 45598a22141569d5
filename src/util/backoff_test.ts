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

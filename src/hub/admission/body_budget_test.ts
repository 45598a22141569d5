// Unit tests for the body byte budget: each body's allowance, the shared pool, and what goes back.
import assert from "node:assert/strict";
import { BodyBudget } from "./body_budget.ts";

const KiB = 1024;

Deno.test("BodyBudget lets each body hold its allowance and refuses bytes past it once the shared pool is full", () => {
  const budget = new BodyBudget({ perBodyBytes: 4 * KiB, sharedBytes: 10 * KiB });
  const big = budget.open();
  assert.ok(big.take(4 * KiB), "within the allowance: no pool");
  assert.equal(budget.pooled, 0);
  assert.ok(big.take(8 * KiB));
  assert.equal(budget.pooled, 8 * KiB);
  const other = budget.open();
  assert.ok(other.take(5 * KiB), "1 KiB past its allowance: the pool's last 2 KiB has room");
  assert.equal(budget.pooled, 9 * KiB);
  assert.equal(other.take(2 * KiB), false, "would take the pool to 11 KiB");
  assert.equal(budget.pooled, 9 * KiB, "a refused take counts nothing");
  assert.equal(budget.refused, 1);
  big.release();
  big.release();
  assert.equal(budget.pooled, KiB, "the big body's pool share went back, once");
  assert.ok(other.take(2 * KiB));
  assert.equal(big.take(1), false, "a released lease takes nothing");
});

Deno.test("BodyBudget: a small body always fits, however many large bodies hold the pool", () => {
  const budget = new BodyBudget({ perBodyBytes: 64 * KiB, sharedBytes: 1024 * KiB });
  const hogs = Array.from({ length: 256 }, () => budget.open());
  let held = 0;
  for (const h of hogs) {
    // Each stranger sends 4 MiB - 1 in 64 KiB chunks, as far as the budget lets it.
    for (let sent = 0; sent < 4 * 1024 * KiB - 1; sent += 64 * KiB) {
      if (!h.take(64 * KiB)) break;
      held += 64 * KiB;
    }
  }
  assert.ok(held <= 256 * 64 * KiB + 1024 * KiB, `the hogs hold ${held} bytes`);
  const review = budget.open();
  assert.ok(review.take(3 * KiB), "an apiserver's review of a few KiB still fits");
  assert.throws(() => new BodyBudget({ sharedBytes: -1 }), /sharedBytes must be a number of bytes, got -1/);
});

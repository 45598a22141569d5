import assert from "node:assert/strict";
import { Fifo } from "./_fifo.ts";

Deno.test("Fifo keeps order across growth and wrap-around", () => {
  const f = new Fifo<number>();
  const seen: number[] = [];
  let next = 0;
  // Interleave pushes and shifts so the head wraps many times while the buffer grows.
  for (let round = 0; round < 50; round++) {
    for (let i = 0; i < round + 3; i++) f.push(next++);
    for (let i = 0; i < 2; i++) seen.push(f.shift() as number);
  }
  assert.deepEqual([...f], Array.from({ length: next - seen.length }, (_, i) => seen.length + i));
  while (f.length > 0) seen.push(f.shift() as number);
  assert.deepEqual(seen, Array.from({ length: next }, (_, i) => i));
  assert.equal(f.shift(), undefined);
  assert.equal(f.peek(), undefined);
});

Deno.test("Fifo keeps working after it shrinks and after clear()", () => {
  const f = new Fifo<string>();
  for (let i = 0; i < 10_000; i++) f.push(`k${i}`);
  for (let i = 0; i < 9_990; i++) assert.equal(f.shift(), `k${i}`);
  f.push("last");
  assert.deepEqual([...f], [...Array.from({ length: 10 }, (_, i) => `k${9_990 + i}`), "last"]);
  assert.equal(f.peek(), "k9990");
  f.clear();
  assert.equal(f.length, 0);
  f.push("again");
  assert.equal(f.shift(), "again");
});

import assert from "node:assert/strict";
import { Heap } from "./_heap.ts";

Deno.test("Heap pops items smallest first", () => {
  const h = new Heap<number>((a, b) => a < b);
  const input = [5, 3, 9, 1, 7, 3, 8, 2, 6, 0, 4];
  for (const n of input) h.push(n);
  assert.equal(h.peek(), 0);
  const out: number[] = [];
  while (h.length > 0) out.push(h.pop() as number);
  assert.deepEqual(out, [...input].sort((a, b) => a - b));
  assert.equal(h.pop(), undefined);
});

Deno.test("Heap.rebuild() replaces the contents and restores the order", () => {
  const h = new Heap<number>((a, b) => a < b);
  h.push(100);
  h.rebuild([9, 4, 7, 1, 8]);
  const out: number[] = [];
  while (h.length > 0) out.push(h.pop() as number);
  assert.deepEqual(out, [1, 4, 7, 8, 9]);
});

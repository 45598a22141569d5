// Unit tests for concatBytes: parts joined in order into a new array, never one of the parts itself.
import assert from "node:assert/strict";
import { concatBytes } from "./bytes.ts";

Deno.test("concatBytes joins the parts in order into a new array, even a single part", () => {
  assert.deepEqual(concatBytes([]), new Uint8Array(0));
  assert.deepEqual(concatBytes([Uint8Array.of(1, 2), new Uint8Array(0), Uint8Array.of(3)]), Uint8Array.of(1, 2, 3));
  const one = Uint8Array.of(7, 8);
  const joined = concatBytes([one.subarray(1)]);
  assert.deepEqual(joined, Uint8Array.of(8));
  one[1] = 9;
  assert.equal(joined[0], 8, "a copy, not a view of the part's buffer");
});

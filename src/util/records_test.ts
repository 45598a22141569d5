// Unit tests for narrowing untrusted values to plain objects.
import assert from "node:assert/strict";
import { isRecord, record } from "./records.ts";

Deno.test("isRecord is true for a plain object only, and record answers it or undefined", () => {
  for (const no of [null, undefined, [], [1], "x", 1, true]) {
    assert.equal(isRecord(no), false, String(no));
    assert.equal(record(no), undefined, String(no));
  }
  const obj = { a: 1 };
  assert.equal(isRecord(obj), true);
  assert.equal(record(obj), obj);
  assert.deepEqual(record(JSON.parse('{"kind":"Status"}')), { kind: "Status" });
});

// Unit tests for the persisted handler state and the field diff update handlers see.
import assert from "node:assert/strict";
import { diff, finished, stateOf, valueAt } from "./handler_state.ts";

Deno.test("stateOf reads status.handlers, and an empty state when status or the field is absent or malformed", () => {
  const state = { create: { a: { done: true } }, lastSpec: "{}" };
  assert.equal(stateOf({ handlers: state, uuid: "x" }), state);
  for (const status of [undefined, null, {}, { handlers: null }, { handlers: "x" }, { handlers: [1] }]) {
    assert.deepEqual(stateOf(status), {}, JSON.stringify(status));
  }
});

Deno.test("finished is true for a handler that is done or failed for good in that phase, and false otherwise", () => {
  const state = {
    create: { ok: { done: true }, bad: { failed: "spec.size must be positive" }, pending: { done: false } },
    delete: { cleanup: { failed: "" } },
  };
  assert.equal(finished(state, "create", "ok"), true);
  assert.equal(finished(state, "create", "bad"), true);
  assert.equal(finished(state, "create", "pending"), false);
  assert.equal(finished(state, "create", "unknown"), false);
  assert.equal(finished(state, "delete", "ok"), false, "phases are separate");
  assert.equal(finished(state, "delete", "cleanup"), true, "an empty failure message still counts");
  assert.equal(finished({}, "delete", "cleanup"), false);
});

Deno.test("diff lists added, changed and removed leaves by dotted path, keys sorted, nothing for equal values", () => {
  const old = { spec: { replicas: 1, image: "a", env: { A: "1" } }, keep: [1, 2] };
  const now = { spec: { replicas: 2, env: { A: "1", B: "2" } }, keep: [1, 2], extra: true };
  assert.deepEqual(diff(old, now), [
    { op: "add", path: "extra", old: undefined, new: true },
    { op: "add", path: "spec.env.B", old: undefined, new: "2" },
    { op: "remove", path: "spec.image", old: "a", new: undefined },
    { op: "change", path: "spec.replicas", old: 1, new: 2 },
  ]);
  assert.deepEqual(diff(old, structuredClone(old)), []);
});

Deno.test("diff compares arrays as wholes and reports a type change at its own path", () => {
  assert.deepEqual(diff({ a: [1, 2] }, { a: [1, 3] }), [{ op: "change", path: "a", old: [1, 2], new: [1, 3] }]);
  assert.deepEqual(diff({ a: { b: 1 } }, { a: "x" }), [{ op: "change", path: "a", old: { b: 1 }, new: "x" }]);
  assert.deepEqual(diff(undefined, { a: 1 }), [{ op: "add", path: "", old: undefined, new: { a: 1 } }]);
  assert.deepEqual(diff(1, 2, "spec.size"), [{ op: "change", path: "spec.size", old: 1, new: 2 }]);
});

Deno.test("valueAt follows a dotted path and answers undefined when any step is missing or not an object", () => {
  const obj = { spec: { replicas: 3, nested: { deep: null } }, list: [{ x: 1 }] };
  assert.equal(valueAt(obj, "spec.replicas"), 3);
  assert.deepEqual(valueAt(obj, "spec"), obj.spec);
  assert.equal(valueAt(obj, "spec.nested.deep"), null);
  assert.equal(valueAt(obj, "spec.nested.deep.more"), undefined);
  assert.equal(valueAt(obj, "spec.replicas.x"), undefined);
  assert.equal(valueAt(obj, "missing.path"), undefined);
  assert.equal(valueAt(obj, "list.0.x"), 1);
  assert.equal(valueAt(undefined, "a"), undefined);
});

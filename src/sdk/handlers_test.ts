// Unit tests for defineHandlers(): what it declares and which definitions it refuses.
import assert from "node:assert/strict";
import { OperatorDefinitionError } from "./define_operator.ts";
import { defineHandlers, FINALIZER, PermanentError, TemporaryError } from "./handlers.ts";

const resource = { group: "demo.operator", version: "v1", kind: "Uuid", plural: "uuid" };

Deno.test("defineHandlers() needs the patch verb (for its finalizer) only when a delete handler exists", () => {
  const plain = defineHandlers({ name: "a", resource, create: () => {} });
  assert.deepEqual([...plain.verbs].sort(), ["get", "patchStatus"]);
  const withDelete = defineHandlers({ name: "b", resource, delete: () => {} });
  assert.ok(withDelete.verbs.includes("patch"));
  assert.equal(FINALIZER, "operator-hub.dev/handlers");
});

Deno.test("defineHandlers() queues an object only while a handler is due", () => {
  const op = defineHandlers({ name: "a", resource, create: function one() {} });
  const meta = { name: "x", namespace: "n", uid: "u1", resourceVersion: "1" };
  assert.equal(op.needsReconcile!({ metadata: meta }), true, "create not done");
  assert.equal(
    op.needsReconcile!({ metadata: meta, status: { handlers: { create: { one: { done: true } } } } }),
    false,
    "create done: the watch event of its own write is not queued",
  );
  assert.equal(op.needsReconcile!({ metadata: { ...meta, deletionTimestamp: "t" } }), false, "no delete handler");
  const del = defineHandlers({ name: "b", resource, delete: () => {} });
  assert.equal(del.needsReconcile!({ metadata: meta }), true, "the finalizer must be added");
  assert.equal(
    del.needsReconcile!({ metadata: { ...meta, finalizers: [FINALIZER] } as typeof meta }),
    false,
    "finalizer in place, nothing else due",
  );
});

Deno.test("defineHandlers() refuses duplicate handler ids, non-functions and a field on a create handler", () => {
  assert.throws(
    () => defineHandlers({ name: "a", resource, create: [function h() {}, function h() {}] }),
    (e: Error) => e instanceof OperatorDefinitionError && /share the id "h"/.test(e.message),
  );
  assert.throws(
    () => defineHandlers({ name: "a", resource, create: { fn: 5 as unknown as () => void } }),
    OperatorDefinitionError,
  );
  assert.throws(
    () => defineHandlers({ name: "a", resource, create: { fn: () => {}, field: "spec.x" } }),
    /field` applies to update handlers only/,
  );
});

Deno.test("TemporaryError carries its delay and PermanentError its name", () => {
  const t = new TemporaryError("later", 1500);
  assert.equal(t.name, "TemporaryError");
  assert.equal(t.delayMs, 1500);
  assert.equal(new PermanentError("never").name, "PermanentError");
});

import assert from "node:assert/strict";
import {
  fieldOrEmpty,
  fieldProjection,
  readGuard,
  readsProblem,
  UndeclaredFieldError,
  unguarded,
} from "./field_projection.ts";
import { Store } from "./store.ts";

const raw = () => ({
  apiVersion: "demo.operator/v1",
  kind: "Uuid",
  metadata: {
    name: "a",
    namespace: "web",
    uid: "u-1",
    resourceVersion: "7",
    generation: 2,
    creationTimestamp: "2026-12-07T12:00:00Z",
    labels: { app: "web" },
    annotations: { note: "x" },
    finalizers: ["f"],
    ownerReferences: [{ uid: "p" }],
    managedFields: [{ manager: "kubectl" }],
  },
  spec: { size: 3, image: "web:1", nested: { a: 1, b: 2 } },
  status: { uuid: "6f1c2a9e-3d4b-4c5a-9e8f-0a1b2c3d4e5f", state: "Ok", message: "m", observedGeneration: 2 },
});

Deno.test("fieldProjection keeps the metadata identity and exactly the declared fields, whole or in part", () => {
  const project = fieldProjection(["status.uuid", "status.state", "spec.nested.a", "metadata.labels"]);
  assert.deepEqual(project(raw()), {
    metadata: { name: "a", namespace: "web", uid: "u-1", resourceVersion: "7", generation: 2, labels: { app: "web" } },
    spec: { nested: { a: 1 } },
    status: { uuid: "6f1c2a9e-3d4b-4c5a-9e8f-0a1b2c3d4e5f", state: "Ok" },
  });
  assert.deepEqual(fieldProjection([])(raw()).metadata.name, "a");
  assert.deepEqual(Object.keys(fieldProjection([])(raw())), ["metadata"]);
  // A field under one declared whole adds nothing; a declared field the object lacks is absent, not undefined.
  const whole = fieldProjection(["status", "status.uuid", "spec.missing", "metadata.finalizers"])(raw());
  assert.deepEqual(whole.status, raw().status);
  assert.equal("spec" in whole, false);
  assert.deepEqual((whole.metadata as unknown as { finalizers: string[] }).finalizers, ["f"]);
  assert.equal(fieldProjection(["spec.size.value"])(raw()).spec, undefined, "a path through a number keeps nothing");
});

Deno.test("fieldProjection keeps each object's own string values as objects alternate, shared or not", () => {
  const project = fieldProjection(["status.state", "status.message", "spec.image"]);
  const long = "x".repeat(300);
  const states = ["Ok", "Ok", "Failed", "Ok", long, long, "Ok"];
  const kept = states.map((state, i) => {
    const r = raw();
    r.status.state = state;
    r.status.message = i % 2 ? "odd" : "even";
    r.spec.image = `web:${i}`;
    return project(r);
  });
  assert.deepEqual(kept.map((k) => (k.status as { state: string }).state), states);
  assert.deepEqual(
    kept.map((k) => (k.status as { message: string }).message),
    states.map((_, i) => i % 2 ? "odd" : "even"),
  );
  assert.deepEqual(kept.map((k) => (k.spec as { image: string }).image), states.map((_, i) => `web:${i}`));
  // A value that is not a string is kept as it is, also where the last one kept was a string.
  const r = raw() as Record<string, unknown>;
  (r.status as Record<string, unknown>).state = { phase: "Ok" };
  assert.deepEqual((project(r).status as { state: unknown }).state, { phase: "Ok" });
});

Deno.test("readsProblem names the first bad field path", () => {
  assert.equal(readsProblem(["spec", "status.uuid", "metadata.labels"]), undefined);
  assert.match(readsProblem("spec")!, /must be an array/);
  assert.match(readsProblem(["spec..a"])!, /"spec\.\.a" is not a field path/);
  assert.match(readsProblem(["spec.*"])!, /no wildcards/);
  assert.match(readsProblem(["metadata"])!, /name the fields/);
  assert.match(readsProblem(["metadata.managedFields"])!, /never kept/);
  assert.match(readsProblem(["spec", "spec"])!, /listed twice/);
  assert.match(readsProblem([""])!, /non-empty string/);
  assert.throws(() => fieldProjection(["spec."]), /is not a field path/);
});

Deno.test("readGuard lets declared reads through and throws UndeclaredFieldError, naming the field, on any other", () => {
  const reads = ["status.uuid", "spec.nested"];
  const project = fieldProjection(reads);
  const guard = readGuard("uuid", "Uuid", reads);
  const obj = guard(project(raw()));
  assert.equal(obj.metadata.name, "a");
  assert.equal(obj.metadata.deletionTimestamp, undefined, "identity metadata is always declared");
  assert.equal((obj.status as { uuid: string }).uuid, "6f1c2a9e-3d4b-4c5a-9e8f-0a1b2c3d4e5f");
  assert.deepEqual((obj.spec as { nested: unknown }).nested, { a: 1, b: 2 }, "a field declared whole is read whole");
  const err = (read: () => unknown) => assert.throws(read, UndeclaredFieldError) as unknown;
  err(() => obj.spec && (obj.spec as { size?: number }).size);
  assert.throws(() => (obj.status as { state?: string }).state, (e: unknown) => {
    assert.ok(e instanceof UndeclaredFieldError);
    assert.equal(e.field, "status.state");
    assert.equal(e.name, "UndeclaredFieldError");
    assert.match(e.message, /operator uuid read Uuid field status\.state, which its reads does not declare/);
    assert.match(e.message, /reads: status\.uuid, spec\.nested/);
    assert.match(e.message, /Add "status\.state" to reads/);
    return true;
  });
  err(() => obj.metadata.labels);
  err(() => obj.data);
  err(() => "state" in (obj.status as object));
  // What tools read passes: JSON, spreading, keys, deep equality, unguarded.
  assert.equal(JSON.stringify(obj.status), '{"uuid":"6f1c2a9e-3d4b-4c5a-9e8f-0a1b2c3d4e5f"}');
  assert.deepEqual({ ...obj.metadata }.name, "a");
  assert.deepEqual(Object.keys(obj), ["metadata", "status", "spec"], "in the order reads declares them");
  assert.equal(guard(unguarded(obj)), obj, "the same object is seen through the same view");
  assert.equal(obj.status, obj.status);
  assert.equal(unguarded(obj).status, unguarded(obj.status));
  assert.equal(unguarded(7), 7);
});

Deno.test("a Store with a field projection keeps less of each object than trimObject's spec and status", () => {
  const s = new Store(fieldProjection(["status.uuid"]));
  s.upsert(raw());
  assert.deepEqual(s.get("web/a"), {
    metadata: { name: "a", namespace: "web", uid: "u-1", resourceVersion: "7", generation: 2 },
    status: { uuid: "6f1c2a9e-3d4b-4c5a-9e8f-0a1b2c3d4e5f" },
  });
});

Deno.test("fieldOrEmpty gives an absent field declared in part as a guarded empty object, and plain {} otherwise", () => {
  const reads = ["status.uuid"];
  const obj = readGuard("uuid", "Uuid", reads)(fieldProjection(reads)({ metadata: { name: "a" } }));
  assert.equal(obj.status, undefined, "the guard itself keeps an absent field absent");
  const status = fieldOrEmpty(obj, "status");
  assert.equal(status.uuid, undefined);
  assert.throws(() => status.state, /operator uuid read Uuid field status\.state/);
  assert.throws(() => fieldOrEmpty(obj, "spec"), /read Uuid field spec,/, "an undeclared field is still refused");
  assert.deepEqual(fieldOrEmpty({ metadata: { name: "a" } }, "spec"), {}, "an unguarded object gets a plain {}");
  const held = { metadata: { name: "a" }, spec: { size: 1 } };
  assert.equal(fieldOrEmpty(held, "spec"), held.spec);
});

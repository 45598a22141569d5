// Unit tests for the per-cluster store.
import assert from "node:assert/strict";
import { Store, trimObject } from "./store.ts";

const obj = (name: string, rv: string, extra: Record<string, unknown> = {}) => ({
  metadata: {
    name,
    namespace: "ns",
    resourceVersion: rv,
    managedFields: [{ manager: "kubectl" }],
    annotations: { a: "x".repeat(1000) },
  },
  ...extra,
});

Deno.test("trimObject() drops managedFields and annotations but keeps status", () => {
  const t = trimObject(obj("a", "1", { status: { uuid: "u" } }));
  assert.deepEqual(t, {
    metadata: { name: "a", namespace: "ns", resourceVersion: "1", uid: undefined, generation: undefined },
    status: { uuid: "u" },
  });
});

Deno.test("Store.replace() reports added, changed and deleted keys but not unchanged ones", () => {
  const s = new Store();
  s.replace([obj("a", "1"), obj("b", "1"), obj("c", "1")]);
  const changed = s.replace([obj("a", "1"), obj("b", "2"), obj("d", "1")]);
  assert.deepEqual(changed.sort(), ["ns/b", "ns/c", "ns/d"]);
  assert.equal(s.size, 3);
  assert.equal(s.get("ns/c"), undefined);
});

Deno.test("Store.delete() removes by namespace and name", () => {
  const s = new Store();
  s.upsert(obj("a", "1"));
  assert.equal(s.delete(obj("a", "2")), "ns/a");
  assert.equal(s.size, 0);
});

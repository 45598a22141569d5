// Unit tests for the per-cluster store.
import assert from "node:assert/strict";
import { LAST_APPLIED_ANNOTATION, objectMeta, pruneObject, Store, type StoredObject, trimObject } from "./store.ts";

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

Deno.test("pruneObject() drops managedFields and the last-applied annotation, keeps other annotations, leaves raw alone", () => {
  const raw = {
    metadata: {
      name: "s",
      namespace: "ns",
      managedFields: [{ manager: "kubectl" }],
      annotations: { [LAST_APPLIED_ANNOTATION]: '{"data":{"password":"c2VjcmV0"}}', keep: "me" },
    },
    data: { password: "c2VjcmV0" },
  };
  const pruned = pruneObject(raw);
  assert.deepEqual(pruned, { metadata: { name: "s", namespace: "ns", annotations: { keep: "me" } }, data: raw.data });
  assert.ok(LAST_APPLIED_ANNOTATION in raw.metadata.annotations, "the raw object is not modified");
  assert.ok("managedFields" in raw.metadata, "the raw object is not modified");
  const clean = { metadata: { name: "c" } };
  assert.equal(pruneObject(clean), clean, "an object with nothing to drop is passed through");
});

Deno.test("Store keeps no last-applied annotation or managedFields even when the projection keeps all metadata", () => {
  const keepAll = (raw: Record<string, unknown>): StoredObject => ({
    metadata: { ...(raw.metadata as StoredObject["metadata"]), ...objectMeta(raw, { labels: true }) },
  });
  const s = new Store(keepAll);
  const applied = {
    metadata: {
      name: "a",
      namespace: "ns",
      resourceVersion: "1",
      managedFields: [{ manager: "kubectl" }],
      annotations: { [LAST_APPLIED_ANNOTATION]: "{}", other: "x" },
    },
  };
  s.upsert(applied);
  s.replace([{ ...applied, metadata: { ...applied.metadata, name: "b" } }, applied]);
  for (const key of ["ns/a", "ns/b"]) {
    const meta = s.get(key)!.metadata as unknown as Record<string, unknown>;
    assert.equal("managedFields" in meta, false, key);
    assert.deepEqual(meta.annotations, { other: "x" }, key);
  }
  assert.equal(s.projection, keepAll, "the projection is the one given, so stores can still be shared by it");
});

// Unit tests for the per-cluster store.
import assert from "node:assert/strict";
import {
  IDENTITY_FIELDS,
  LAST_APPLIED_ANNOTATION,
  newerVersion,
  objectMeta,
  pruneObject,
  Store,
  type StoredObject,
  trimObject,
} from "./store.ts";

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

Deno.test("Store.takeWritten() takes a newer answer of a held object, and an older watch event never replaces it", () => {
  const s = new Store();
  s.upsert(obj("a", "10"));
  assert.equal(s.takeWritten(obj("a", "12", { status: { done: true } })), true);
  // The watch event of the first write (rv 11) arrives after the second write's answer: it is not taken.
  s.upsert(obj("a", "11", { status: {} }));
  assert.equal(s.get("ns/a")?.metadata.resourceVersion, "12");
  assert.deepEqual(s.get("ns/a")?.status, { done: true });
  // A list served behind the write keeps it too, and reports no change.
  assert.deepEqual(s.replace([obj("a", "11")]), []);
  assert.equal(s.get("ns/a")?.metadata.resourceVersion, "12");
  // The write's own event, and anything newer, is taken.
  s.upsert(obj("a", "13"));
  assert.equal(s.get("ns/a")?.metadata.resourceVersion, "13");
});

Deno.test("Store.takeWritten() never brings back a deleted object nor replaces a newer or opaque version", () => {
  const s = new Store();
  assert.equal(s.takeWritten(obj("gone", "5")), false, "not held: the watch removed it, or never saw it");
  assert.equal(s.get("ns/gone"), undefined);
  s.upsert(obj("a", "20"));
  assert.equal(s.takeWritten(obj("a", "19")), false, "older than held");
  assert.equal(s.takeWritten(obj("a", "20")), false, "the same version");
  s.upsert(obj("b", "opaque-1"));
  assert.equal(s.takeWritten(obj("b", "opaque-2")), false, "not comparable: left to the watch");
  s.upsert(obj("b", "opaque-0"));
  assert.equal(s.get("ns/b")?.metadata.resourceVersion, "opaque-0", "an opaque version from the watch is taken");
});

Deno.test("newerVersion() compares decimal resourceVersions by value, never opaque ones", () => {
  assert.equal(newerVersion("100", "99"), true);
  assert.equal(newerVersion("99", "100"), false);
  assert.equal(newerVersion("7", "7"), false);
  assert.equal(newerVersion("a1", "1"), false);
  assert.equal(newerVersion(undefined, "1"), false);
  assert.equal(newerVersion("012", "11"), false, "a leading zero is not an etcd revision");
});

Deno.test("objectMeta() keeps exactly IDENTITY_FIELDS, the metadata a read guard always lets through", () => {
  const full = {
    metadata: {
      name: "a",
      namespace: "ns",
      uid: "u",
      resourceVersion: "1",
      generation: 2,
      deletionTimestamp: "2026-12-07T12:00:00Z",
      labels: { app: "web" },
      finalizers: ["f"],
      ownerReferences: [{ uid: "p" }],
      creationTimestamp: "2026-12-07T11:00:00Z",
    },
  };
  assert.deepEqual(Object.keys(objectMeta(full)).sort(), [...IDENTITY_FIELDS].sort());
});

Deno.test("Store counts, lists and finds objects by namespace and name, a cluster-scoped one by its name", () => {
  const s = new Store();
  const at = (namespace: string | undefined, name: string, rv = "1") => ({
    metadata: { name, resourceVersion: rv, ...(namespace === undefined ? {} : { namespace }) },
  });
  s.upsert(at("ns1", "a"));
  s.upsert(at("ns2", "a"));
  s.upsert(at(undefined, "c"));
  assert.equal(s.upsert(at("ns1", "a", "2")), "ns1/a");
  assert.equal(s.size, 3, "an object stored again is counted once");
  assert.deepEqual([...s.keys()].sort(), ["c", "ns1/a", "ns2/a"]);
  assert.equal(s.getRef({ namespace: "ns1", name: "a" })?.metadata.resourceVersion, "2");
  assert.equal(s.get("c")?.metadata.name, "c");
  assert.equal(s.getRef({ name: "c" }), s.get("c"), "a ref without a namespace names a cluster-scoped object");
  assert.equal(s.getRef({ name: "a" }), undefined, "nor a namespaced one");
  assert.equal(s.delete(at("ns2", "a")), "ns2/a");
  assert.equal(s.delete(at("ns2", "missing")), "ns2/missing");
  assert.equal(s.size, 2, "deleting what is not held counts nothing");
  assert.deepEqual([...s.keys()].sort(), ["c", "ns1/a"]);
  s.clear();
  assert.deepEqual([s.size, [...s.keys()]], [0, []]);
});

Deno.test("A relist of one namespace removes only that namespace's missing objects; an empty list removes all", () => {
  const s = new Store();
  for (const [ns, name] of [["ns1", "a"], ["ns1", "b"], ["ns2", "c"]]) {
    s.upsert({ metadata: { name, namespace: ns, resourceVersion: "1" } });
  }
  const relist = s.startRelist("ns1");
  relist.add({ metadata: { name: "a", namespace: "ns1", resourceVersion: "1" } });
  assert.deepEqual(relist.finish(), ["ns1/b"]);
  assert.deepEqual([...s.keys()].sort(), ["ns1/a", "ns2/c"]);
  assert.deepEqual(s.replace([]).sort(), ["ns1/a", "ns2/c"]);
  assert.equal(s.size, 0);
});

Deno.test("Store.requestOf() names a held object by its stored namespace and name, and reads any other key back", () => {
  const s = new Store();
  s.upsert({ metadata: { name: "a", namespace: "web", resourceVersion: "1" } });
  s.upsert({ metadata: { name: "node-1", resourceVersion: "1" } });
  assert.deepEqual(s.requestOf("prod", "web/a"), { cluster: "prod", namespace: "web", name: "a" });
  assert.deepEqual(s.requestOf("prod", "node-1"), { cluster: "prod", namespace: "", name: "node-1" });
  assert.deepEqual(s.requestOf("prod", "web/gone"), { cluster: "prod", namespace: "web", name: "gone" });
});

Deno.test("Store takes objects from a projection that freezes their metadata", () => {
  const frozen = (raw: Record<string, unknown>): StoredObject => ({ metadata: Object.freeze(objectMeta(raw)) });
  const s = new Store(frozen);
  s.upsert({ metadata: { name: "a", namespace: "ns", resourceVersion: "1" } });
  s.upsert({ metadata: { name: "b", namespace: "ns", resourceVersion: "1" } });
  assert.deepEqual([...s.keys()].sort(), ["ns/a", "ns/b"]);
  assert.equal(s.get("ns/b")?.metadata.namespace, "ns");
});

Deno.test("Store finds an object by the key it returned even when the server sent a namespace that is not a string", () => {
  const s = new Store();
  const odd = { metadata: { name: "a", namespace: 7 as unknown as string, resourceVersion: "1" } };
  const key = s.upsert(odd);
  assert.equal(key, "7/a");
  assert.equal(s.get(key)?.metadata.name, "a");
  assert.deepEqual([...s.keys()], ["7/a"]);
  assert.deepEqual(s.requestOf("prod", key), { cluster: "prod", namespace: "7", name: "a" });
  assert.equal(s.delete(odd), "7/a");
  assert.equal(s.size, 0);
});

// Unit tests for defineHandlers(): what it declares and which definitions it refuses.
import assert from "node:assert/strict";
import { isConflict, type ResourceType } from "../kube/mod.ts";
import type { ReconcileScope, ResourceClient, StoredObject } from "../runtime/mod.ts";
import { silentLogger } from "../util/mod.ts";
import { OperatorDefinitionError } from "./define_operator.ts";
import { defineHandlers, FINALIZER, PermanentError, TemporaryError } from "./handlers.ts";
import { kinds } from "./kinds.ts";

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

/** One object in memory behind the parts of a ResourceClient a handlers operator uses; counts its writes. */
class MemoryObject {
  obj: StoredObject;
  writes: string[] = [];
  constructor(obj: StoredObject) {
    this.obj = obj;
  }
  client(): ResourceClient {
    const rv = () => String(Number(this.obj.metadata.resourceVersion ?? "0") + 1);
    return {
      type: resource,
      cached: () => structuredClone(this.obj),
      get: () => Promise.resolve(structuredClone(this.obj)),
      patch: (_ref: unknown, patch: { metadata: { finalizers: string[] } }) => {
        this.writes.push("finalizer");
        this.obj = { ...this.obj, metadata: { ...this.obj.metadata, ...patch.metadata, resourceVersion: rv() } };
        return Promise.resolve(structuredClone(this.obj));
      },
      patchStatus: (object: StoredObject, status: Record<string, unknown>) => {
        if (object.metadata.resourceVersion !== this.obj.metadata.resourceVersion) {
          return Promise.reject(Object.assign(new Error("stale"), { status: 409 }));
        }
        this.writes.push("status");
        const merged = { ...(this.obj.status ?? {}), ...status } as Record<string, unknown>;
        this.obj = { ...this.obj, metadata: { ...this.obj.metadata, resourceVersion: rv() }, status: merged };
        return Promise.resolve();
      },
    } as unknown as ResourceClient;
  }
}

function scopeOf(memory: MemoryObject, others: Record<string, unknown> = {}): ReconcileScope {
  return {
    client: memory.client(),
    events: { record: () => Promise.resolve() },
    cluster: (name: string) => ({ name, client: (type?: ResourceType) => others[type?.plural ?? ""] }),
    clusters: () => ["prod"],
    signal: new AbortController().signal,
    logger: silentLogger(),
    reconcileId: "r",
  } as unknown as ReconcileScope;
}

/** The object's status, as a record. */
const st = (m: MemoryObject) => (m.obj.status ?? {}) as Record<string, unknown>;
const request = { cluster: "prod", namespace: "n", name: "x" };
const fresh = () =>
  new MemoryObject({ metadata: { name: "x", namespace: "n", uid: "u1", resourceVersion: "1" }, spec: { a: 1 } });

Deno.test("A 409 from a call on another resource is that call's error: thrown after the pass, the handlers not rerun at once", async () => {
  let runs = 0;
  const namespaces = {
    delete: () => Promise.reject(Object.assign(new Error("namespace is terminating"), { status: 409 })),
  };
  const op = defineHandlers({
    name: "a",
    resource,
    uses: [{ type: kinds.Namespace, verbs: ["delete"] }],
    create: ({ clientFor, name }) => {
      runs++;
      return clientFor(kinds.Namespace).delete({ name });
    },
  });
  const memory = fresh();
  await assert.rejects(
    op.reconciler.reconcile(request, scopeOf(memory, { namespaces })),
    (e: Error) => isConflict(e) && e.message === "namespace is terminating",
  );
  assert.equal(runs, 1, "a conflict elsewhere never re-reads the object and reruns its handlers");
  assert.deepEqual(memory.writes, [], "nothing progressed: no write");
  assert.deepEqual(op.uses.map((u) => u.type.plural), ["namespaces"]);
});

Deno.test("A 409 of the object's own status write is re-read and decided again at once (the handler whose write lost runs again)", async () => {
  let runs = 0;
  const op = defineHandlers({ name: "a", resource, create: () => void runs++ });
  const memory = fresh();
  const scope = scopeOf(memory);
  // Another writer bumps the object between the cached read and the write: the first status write gets a 409.
  const cached = memory.obj;
  memory.obj = { ...memory.obj, metadata: { ...memory.obj.metadata, resourceVersion: "2" } };
  (scope.client as unknown as { cached: () => StoredObject }).cached = () => cached;
  await op.reconciler.reconcile(request, scope);
  assert.equal(runs, 2, "the handler's write lost: it runs again on the fresh object (at least once, as in Kopf)");
  assert.deepEqual(memory.writes, ["status"]);
  assert.deepEqual((memory.obj.status as Record<string, unknown>).handlers, { create: { create: { done: true } } });
});

Deno.test("Level handlers (reconcile) run after the create handlers in one write, once per object per process, and whenever queued with nothing else due", async () => {
  const calls: string[] = [];
  const op = defineHandlers({
    name: "a",
    resource,
    create: function make() {
      calls.push("create");
      return { state: "Created" };
    },
    reconcile: function ensure() {
      calls.push("reconcile");
      return { children: 3 };
    },
  });
  const memory = fresh();
  const scope = scopeOf(memory);
  await op.reconciler.reconcile(request, scope);
  assert.deepEqual(calls, ["create", "reconcile"]);
  assert.deepEqual(memory.writes, ["status"], "the create's status, the level handler's and the marks: one write");
  assert.deepEqual(st(memory).state, "Created");
  assert.deepEqual(st(memory).children, 3);
  assert.equal(op.needsReconcile!(memory.obj), false, "the watch event of its own write is not queued");
  // Queued by an owned child's change (the pre-check is bypassed): the level handler runs, nothing changed, no write.
  await op.reconciler.reconcile(request, scope);
  assert.deepEqual(calls, ["create", "reconcile", "reconcile"]);
  assert.deepEqual(memory.writes, ["status"]);
  // Another process (a new definition) runs the level handlers once per object, not the create handler.
  const again = defineHandlers({
    name: "a",
    resource,
    create: function make() {},
    reconcile: () => void calls.push("next"),
  });
  assert.equal(again.needsReconcile!(memory.obj), true);
  await again.reconciler.reconcile(request, scope);
  assert.deepEqual(calls.slice(3), ["next"]);
  assert.equal(again.needsReconcile!(memory.obj), false);
});

Deno.test("Update handlers never run at an object's creation: without create handlers the first pass records the spec only", async () => {
  const seen: unknown[] = [];
  const op = defineHandlers({
    name: "a",
    resource,
    update: { field: "spec.a", fn: ({ old, new: now }) => void seen.push([old, now]) },
  });
  const memory = fresh();
  const scope = scopeOf(memory);
  await op.reconciler.reconcile(request, scope);
  assert.deepEqual(seen, []);
  assert.equal((st(memory).handlers as { lastSpec?: string }).lastSpec, '{"a":1}');
  memory.obj = { ...memory.obj, spec: { a: 2 } };
  await op.reconciler.reconcile(request, scope);
  assert.deepEqual(seen, [[1, 2]]);
  assert.deepEqual(memory.writes, ["status", "status"]);
});

Deno.test("A level handler's failure after the update handlers succeeded keeps their mark: the retry runs only the level handler", async () => {
  const calls: string[] = [];
  let fail = true;
  const op = defineHandlers({
    name: "a",
    resource,
    update: function resize() {
      calls.push("update");
    },
    reconcile: function ensure() {
      calls.push("reconcile");
      if (fail) throw new Error("apiserver said 500");
    },
  });
  const memory = fresh();
  memory.obj.status = { handlers: { lastSpec: '{"a":0}' } };
  const scope = scopeOf(memory);
  await assert.rejects(op.reconciler.reconcile(request, scope), /apiserver said 500/);
  assert.equal((st(memory).handlers as { lastSpec?: string }).lastSpec, '{"a":1}');
  fail = false;
  await op.reconciler.reconcile(request, scope);
  assert.deepEqual(calls, ["update", "reconcile", "reconcile"]);
});

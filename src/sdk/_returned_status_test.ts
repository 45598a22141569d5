// Unit tests for returnedStatus() and for defineHandlers() refusing a handler that returns a Kubernetes object.
import assert from "node:assert/strict";
import { type ReconcileScope, type ResourceClient, type StoredObject, TaskSet } from "../runtime/mod.ts";
import { Logger, VirtualClock } from "../util/mod.ts";
import { defineHandlers, PermanentError } from "./handlers.ts";
import { returnedStatus } from "./_returned_status.ts";

const resource = { group: "demo.operator", version: "v1", kind: "Tenant", plural: "tenants" };
const quota = {
  apiVersion: "v1",
  kind: "ResourceQuota",
  metadata: { name: "q", namespace: "t1", resourceVersion: "7" },
  spec: { hard: { pods: "10" } },
  status: { used: { pods: "0" } },
};

Deno.test("returnedStatus() passes plain status fields and nothing through, and refuses a Kubernetes object", () => {
  assert.equal(returnedStatus(undefined, "h"), undefined);
  assert.equal(returnedStatus(null, "h"), undefined);
  assert.deepEqual(returnedStatus({ state: "Ok", kind: "not an object's kind alone" }, "h"), {
    state: "Ok",
    kind: "not an object's kind alone",
  });
  assert.throws(
    () => returnedStatus(quota, "quota"),
    (e: Error) =>
      e instanceof PermanentError &&
      e.message.includes("handler quota returned a Kubernetes object (v1 ResourceQuota t1/q)") &&
      e.message.includes("return a plain object of status fields") && e.message.includes("or nothing"),
  );
  assert.throws(() => returnedStatus([1], "h"), /returned an array: return a plain object/);
});

Deno.test("A handler that returns the object a client call gave back fails for good, named, and nothing of it reaches the status", async () => {
  const errors: Record<string, unknown>[] = [];
  const warnings: string[] = [];
  const logger = new Logger({ level: "error", format: "json", write: (line) => void errors.push(JSON.parse(line)) });
  let obj: StoredObject = {
    metadata: { name: "x", namespace: "n", uid: "u1", resourceVersion: "1" },
    spec: { a: 1 },
  };
  const client = {
    type: resource,
    cached: () => structuredClone(obj),
    get: () => Promise.resolve(structuredClone(obj)),
    patchStatus: (_o: StoredObject, status: Record<string, unknown>) => {
      obj = { ...obj, status: { ...(obj.status ?? {}), ...status } };
      return Promise.resolve();
    },
  } as unknown as ResourceClient;
  const scope = {
    client,
    events: { record: (_o: unknown, e: { message: string }) => void warnings.push(e.message) },
    cluster: () => ({ name: "prod", client: () => undefined }),
    clusters: () => ["prod"],
    signal: new AbortController().signal,
    logger,
    reconcileId: "r",
  } as unknown as ReconcileScope;
  const op = defineHandlers({
    name: "tenants",
    resource,
    create: function quotaFor() {
      return quota as unknown as Record<string, unknown>;
    },
  });
  await op.reconciler.reconcile({ cluster: "prod", namespace: "n", name: "x" }, scope);
  const status = (obj.status ?? {}) as Record<string, unknown>;
  for (const leaked of ["metadata", "spec", "apiVersion", "kind", "used"]) {
    assert.equal(status[leaked], undefined, `status.${leaked} was merged from the returned object`);
  }
  const mark = (status.handlers as { create: Record<string, { failed?: string }> }).create.quotaFor;
  assert.match(mark.failed ?? "", /returned a Kubernetes object \(v1 ResourceQuota t1\/q\)/);
  assert.equal(errors.length, 1);
  assert.equal(warnings.length, 1, "one Warning event on the parent");
  assert.equal(errors[0].handler, "quotaFor");
  assert.match(String(errors[0].error), /return a plain object of status fields/);
});

Deno.test("A timer that returns a Kubernetes object writes nothing of it and logs why, naming the timer", async () => {
  const clock = new VirtualClock();
  const lines: Record<string, unknown>[] = [];
  const logger = new Logger({ level: "warn", format: "json", write: (l) => void lines.push(JSON.parse(l)) });
  const object: StoredObject = {
    metadata: { name: "a", namespace: "ns", uid: "u1", resourceVersion: "1" },
    spec: {},
    status: { handlers: { create: { c: { done: true } } } },
  };
  const written: Record<string, unknown>[] = [];
  const tasks: TaskSet = new TaskSet({ scopeFor: (_k, signal) => scope(signal), clock, logger });
  const scope = (signal: AbortSignal) =>
    ({
      client: {
        cached: () => object,
        patchStatus: (_o: StoredObject, status: Record<string, unknown>) => void written.push(status),
      },
      events: { record: () => Promise.resolve() },
      cluster: () => undefined,
      clusters: () => ["prod"],
      signal,
      logger,
      background: tasks,
      reconcileId: "r",
    }) as unknown as ReconcileScope;
  const op = defineHandlers({
    name: "tenants",
    resource,
    create: function c() {},
    timers: { id: "refresh", intervalMs: 1000, fn: () => quota as unknown as Record<string, unknown> },
  });
  await op.reconciler.reconcile({ cluster: "prod", namespace: "ns", name: "a" }, scope(new AbortController().signal));
  await clock.advance(0);
  assert.deepEqual(written, [], "nothing of the returned object was written");
  const warned = lines.find((l) => l.handler === "refresh");
  assert.ok(warned, JSON.stringify(lines));
  assert.match(String(warned.error), /handler refresh returned a Kubernetes object \(v1 ResourceQuota t1\/q\)/);
  const closing = tasks.close();
  await clock.advance(0);
  await closing;
});

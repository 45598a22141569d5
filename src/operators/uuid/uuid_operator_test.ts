// Unit tests for the Uuid operator on the SDK: its status writes against a fake API whose CRD gains or loses its status subresource.

import assert from "node:assert/strict";
import { discoverResource, type ResourceInfo } from "../../kube/mod.ts";
import { type ApiClient, KubeResourceClient, Store, trimObject } from "../../runtime/mod.ts";
import { silentLogger } from "../../util/mod.ts";
import { UUID_RESOURCE, uuidOperator } from "./uuid_operator.ts";

const FIXED = "0b7d2f4e-2a8c-4b1e-9c3d-5e6f7a8b9c0d";

/** One Uuid object "ns/a" behind a fake API server; `statusSubresource` says which CRD shape it serves. */
class FakeCluster {
  statusSubresource = false;
  object: Record<string, unknown> = {
    apiVersion: "demo.operator/v1",
    kind: "Uuid",
    metadata: { name: "a", namespace: "ns", uid: "u1", resourceVersion: "1", generation: 1 },
  };
  writes: string[] = [];

  api: ApiClient = {
    request: <T>(method: string, path: string, options: { body?: unknown } = {}): Promise<T> => {
      const base = "/apis/demo.operator/v1/namespaces/ns/uuid/a";
      if (method === "GET" && path === "/apis/demo.operator/v1") {
        const resources = [{ name: "uuid" }, ...(this.statusSubresource ? [{ name: "uuid/status" }] : [])];
        return Promise.resolve({ resources } as T);
      }
      if (method === "GET" && path === base) return Promise.resolve(structuredClone(this.object) as T);
      if (method === "PATCH" && (path === base || path === `${base}/status`)) {
        this.writes.push(path.endsWith("/status") ? "status" : "main");
        const toStatus = path.endsWith("/status");
        if (toStatus && !this.statusSubresource) {
          return Promise.reject(Object.assign(new Error("404 Not Found"), { status: 404 }));
        }
        // With a status subresource, a patch of the main resource leaves status alone (200 all the same).
        if (toStatus || !this.statusSubresource) {
          this.object.status = { ...(this.object.status as object), ...(options.body as { status: object }).status };
          const meta = this.object.metadata as { resourceVersion: string };
          meta.resourceVersion = String(Number(meta.resourceVersion) + 1);
        }
        return Promise.resolve(structuredClone(this.object) as T);
      }
      return Promise.reject(Object.assign(new Error(`unexpected ${method} ${path}`), { status: 500 }));
    },
  };
}

/** The operator's reconcile wired to the fake as the hub wires it: cache, typed client, discovery. */
function setup(fake: FakeCluster) {
  const operator = uuidOperator({ newUuid: () => FIXED });
  const store = new Store();
  store.upsert(structuredClone(fake.object));
  const info: ResourceInfo = { statusSubresource: true };
  const discover = async () => Object.assign(info, await discoverResource(fake.api, "c", UUID_RESOURCE));
  const events = { record: () => Promise.resolve() };
  const client = new KubeResourceClient({
    api: fake.api,
    cluster: "c",
    operator: operator.name,
    type: UUID_RESOURCE,
    verbs: new Set(operator.verbs),
    store,
    project: trimObject,
    info,
    rediscover: discover,
    events,
  });
  const reconcile = () =>
    operator.reconciler.reconcile({ cluster: "c", namespace: "ns", name: "a" }, {
      client,
      events,
      cluster: () => undefined,
      signal: new AbortController().signal,
      logger: silentLogger(),
      reconcileId: "1",
    });
  return { discover, reconcile };
}

Deno.test("The Uuid reconciler notices a status the API server dropped because the CRD gained a status subresource, re-detects, and writes it through /status", async () => {
  const fake = new FakeCluster();
  const { discover, reconcile } = setup(fake);
  await discover(); // detected: no status subresource (seed CRD)
  fake.statusSubresource = true; // the production CRD is installed since
  await reconcile();
  assert.deepEqual(fake.writes, ["main", "status"]);
  assert.equal((fake.object.status as { uuid?: string }).uuid, FIXED);
});

Deno.test("The Uuid reconciler writes status into the main resource after /status answers 404 because the CRD lost its status subresource", async () => {
  const fake = new FakeCluster();
  fake.statusSubresource = true;
  const { discover, reconcile } = setup(fake);
  await discover();
  fake.statusSubresource = false; // the seed CRD is installed since
  await reconcile();
  assert.deepEqual(fake.writes, ["status", "main"]);
  assert.equal((fake.object.status as { uuid?: string }).uuid, FIXED);
});

Deno.test("uuidOperator().needsReconcile() queues only objects whose status the rule would change", () => {
  const op = uuidOperator();
  const meta = { name: "a", namespace: "ns", resourceVersion: "1" };
  const valid = "0f8fad5b-d9cb-469f-a165-70867728950e";
  assert.equal(op.needsReconcile!({ metadata: meta }), true, "new object");
  assert.equal(op.needsReconcile!({ metadata: meta, status: { uuid: valid, state: "Ok" } }), false, "done");
  assert.equal(op.needsReconcile!({ metadata: meta, status: { uuid: valid, state: "Banana" } }), true, "bad state");
  assert.equal(op.needsReconcile!({ metadata: meta, status: { uuid: 42 } }), true, "garbage to mark");
  assert.equal(
    op.needsReconcile!({ metadata: { ...meta, deletionTimestamp: "2026-01-01T00:00:00Z" } }),
    false,
    "being deleted",
  );
});

// Unit tests for KubeResourceClient over an injected API transport (no API server).
import assert from "node:assert/strict";
import { ApiError, type ResourceInfo, type ResourceType } from "../kube/mod.ts";
import type { ApiClient } from "./reconciler.ts";
import { TerminalError } from "./reconciler.ts";
import { KubeResourceClient, type ResourceClientDeps } from "./kube_resource_client.ts";
import type { Verb } from "./resource_client.ts";
import { Store, trimObject } from "./cache/store.ts";

interface Call {
  method: string;
  path: string;
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
  contentType?: string;
  discardBody?: boolean;
}

type Answer = (call: Call) => unknown;

const UUID: ResourceType = { group: "demo.operator", version: "v1", kind: "Uuid", plural: "uuid" };
const ALL_VERBS: Verb[] = ["get", "list", "watch", "create", "update", "patch", "patchStatus", "delete", "apply"];

/** A client whose API answers come from `answer`; every call is recorded. `rediscover` answers `discovered()`. */
function setup(answer: Answer, options: {
  info?: ResourceInfo;
  discovered?: () => ResourceInfo;
  verbs?: Verb[];
  type?: ResourceType;
  store?: Store;
} = {}) {
  const calls: Call[] = [];
  const events: { type: string; reason: string; message: string }[] = [];
  let rediscoveries = 0;
  const api: ApiClient = {
    request<T>(method: string, path: string, o: Omit<Call, "method" | "path"> = {}): Promise<T> {
      const call = { method, path, ...o };
      calls.push(call);
      try {
        return Promise.resolve(answer(call) as T);
      } catch (err) {
        return Promise.reject(err);
      }
    },
  };
  const deps: ResourceClientDeps = {
    api,
    cluster: "a",
    operator: "op",
    type: options.type ?? UUID,
    verbs: new Set(options.verbs ?? ALL_VERBS),
    store: options.store,
    project: trimObject,
    info: options.info ?? { statusSubresource: true },
    rediscover: () => {
      rediscoveries++;
      // As the hub does: discovery's answer is written into the shared `info` in place.
      return Promise.resolve(Object.assign(deps.info, (options.discovered ?? (() => deps.info))()));
    },
    events: {
      record: (_o, type, reason, message) => {
        events.push({ type, reason, message });
        return Promise.resolve();
      },
    },
  };
  return { client: new KubeResourceClient(deps), calls, events, deps, rediscoveries: () => rediscoveries };
}

const notFound = (path: string) => new ApiError({ method: "PATCH", path, status: 404 });
const object = { metadata: { namespace: "ns", name: "x", resourceVersion: "7" } };
const STATUS_PATH = "/apis/demo.operator/v1/namespaces/ns/uuid/x/status";
const OBJECT_PATH = "/apis/demo.operator/v1/namespaces/ns/uuid/x";

Deno.test("patchStatus writes through the status subresource with the object's resourceVersion when the CRD has one", async () => {
  const t = setup(() => undefined);
  await t.client.patchStatus(object, { uuid: "u-1" });
  assert.equal(t.calls.length, 1);
  assert.equal(t.calls[0].method, "PATCH");
  assert.equal(t.calls[0].path, STATUS_PATH);
  assert.equal(t.calls[0].contentType, "application/merge-patch+json");
  assert.deepEqual(t.calls[0].body, { metadata: { resourceVersion: "7" }, status: { uuid: "u-1" } });
});

Deno.test("patchStatus writes into the object itself when the CRD has no status subresource", async () => {
  const t = setup((c) => ({ status: (c.body as { status: unknown }).status }), { info: { statusSubresource: false } });
  await t.client.patchStatus(object, { uuid: "u-1" });
  assert.deepEqual(t.calls.map((c) => c.path), [OBJECT_PATH]);
  assert.equal(t.calls[0].discardBody, false, "the answer is read to check the status stuck");
});

Deno.test("patchStatus retries through the object when the status subresource answered 404 although another reconcile already rediscovered", async () => {
  // The race: this write used the status subresource; while it was in flight, a concurrent reconcile
  // rediscovered and set the shared `info` to "no subresource". The 404 must still lead to a write through
  // the object, since discovery now differs from what *this write* used.
  const info = { statusSubresource: true }; // shared by every reconcile of the cluster, as in the hub
  const t = setup((c) => {
    if (c.path.endsWith("/status")) {
      info.statusSubresource = false; // the concurrent reconcile's rediscovery, in place
      throw notFound(c.path);
    }
    return { status: { uuid: "u-1" } };
  }, { info, discovered: () => ({ statusSubresource: false }) });
  await t.client.patchStatus(object, { uuid: "u-1" });
  assert.deepEqual(t.calls.map((c) => c.path), [STATUS_PATH, OBJECT_PATH]);
  assert.equal(t.rediscoveries(), 1);
});

Deno.test("patchStatus rethrows a 404 of the status subresource when discovery still finds it (the object is gone)", async () => {
  const t = setup((c) => {
    throw notFound(c.path);
  });
  await assert.rejects(t.client.patchStatus(object, { uuid: "u-1" }), (err: ApiError) => err.status === 404);
  assert.deepEqual(t.calls.map((c) => c.path), [STATUS_PATH], "no second write");
  assert.equal(t.rediscoveries(), 1);
});

Deno.test("patchStatus notices a status the API server dropped (the CRD gained a subresource) and writes through it", async () => {
  const t = setup(
    (c) => c.path.endsWith("/status") ? undefined : { status: { uuid: "old" } },
    { info: { statusSubresource: false }, discovered: () => ({ statusSubresource: true }) },
  );
  await t.client.patchStatus(object, { uuid: "u-1" });
  assert.deepEqual(t.calls.map((c) => c.path), [OBJECT_PATH, STATUS_PATH]);
});

Deno.test("patchStatus fails when the API server drops the status and discovery still finds no subresource", async () => {
  const t = setup(() => ({ status: {} }), { info: { statusSubresource: false } });
  await assert.rejects(t.client.patchStatus(object, { uuid: "u-1" }), /ignored the status written to ns\/x/);
  assert.equal(t.calls.length, 1);
});

Deno.test("patchStatus accepts an answer where the CRD's schema pruned one written field (the seed CRD has no observedGeneration) while the others stuck", async () => {
  const t = setup(() => ({ status: { uuid: "u-1", state: "Ok" } }), { info: { statusSubresource: false } });
  await t.client.patchStatus(object, { uuid: "u-1", state: "Ok", observedGeneration: 1 });
  assert.deepEqual(t.calls.map((c) => c.path), [OBJECT_PATH], "one write, no retry through /status");
  assert.equal(t.rediscoveries(), 0, "a pruned field is not a dropped status: no rediscovery");
});

Deno.test("patchStatus still notices a dropped status when only the fields it changed are compared (unchanged ones match)", async () => {
  const before = { ...object, status: { uuid: "u-1", state: "Error" } };
  // The answer keeps the old status: uuid matches (it was not changed), the state change did not stick.
  const t = setup(() => ({ status: { uuid: "u-1", state: "Error" } }), { info: { statusSubresource: false } });
  await assert.rejects(t.client.patchStatus(before, { uuid: "u-1", state: "Ok" }), /ignored the status written/);
  assert.equal(t.rediscoveries(), 1);
});

Deno.test("patchStatus turns a rejected (422) status write into a StatusRejected Warning event and a TerminalError", async () => {
  const t = setup((c) => {
    throw new ApiError({ method: "PATCH", path: c.path, status: 422, statusMessage: "status.uuid: Invalid value" });
  });
  await assert.rejects(t.client.patchStatus(object, { uuid: 5 }), (err: Error) => {
    assert.ok(err instanceof TerminalError);
    assert.match(err.message, /rejected the status write.*Invalid value/);
    assert.equal((err.cause as ApiError).status, 422);
    return true;
  });
  assert.deepEqual(t.events.map((e) => [e.type, e.reason]), [["Warning", "StatusRejected"]]);
});

Deno.test("patchStatus passes a conflict through unchanged, without rediscovery or an event", async () => {
  const t = setup((c) => {
    throw new ApiError({ method: "PATCH", path: c.path, status: 409 });
  });
  await assert.rejects(t.client.patchStatus(object, { uuid: "u" }), (err: ApiError) => err.status === 409);
  assert.equal(t.rediscoveries(), 0);
  assert.equal(t.events.length, 0);
});

Deno.test("A verb the operator did not declare throws a TerminalError naming the verb, without an API call", async () => {
  const t = setup(() => undefined, { verbs: ["get"] });
  await assert.rejects(t.client.delete({ namespace: "ns", name: "x" }), (err: Error) => {
    assert.ok(err instanceof TerminalError);
    assert.match(err.message, /did not declare the verb "delete" for Uuid \(uuid\.demo\.operator\) in cluster a/);
    return true;
  });
  await assert.rejects(t.client.patchStatus(object, {}), TerminalError);
  assert.equal(t.calls.length, 0);
});

Deno.test("list follows continue tokens until the last page and projects every item", async () => {
  const t = setup((c) => {
    const token = c.query?.continue;
    if (token === undefined) {
      return { items: [{ metadata: { name: "a", managedFields: [] } }], metadata: { continue: "p2" } };
    }
    if (token === "p2") return { items: [{ metadata: { name: "b" } }], metadata: { continue: "" } };
    throw new Error(`unexpected token ${token}`);
  });
  const items = await t.client.list({ namespace: "ns", labelSelector: "app=web" });
  assert.deepEqual(items.map((i) => i.metadata.name), ["a", "b"]);
  assert.equal("managedFields" in items[0].metadata, false, "projected");
  assert.deepEqual(t.calls.map((c) => [c.path, c.query?.labelSelector, c.query?.continue]), [
    ["/apis/demo.operator/v1/namespaces/ns/uuid", "app=web", undefined],
    ["/apis/demo.operator/v1/namespaces/ns/uuid", "app=web", "p2"],
  ]);
});

Deno.test("create and apply fill in apiVersion and kind; apply uses the apply content type and field manager", async () => {
  const t = setup((c) => c.body);
  await t.client.create({ metadata: { name: "n", namespace: "ns" }, spec: {} });
  await t.client.apply({ metadata: { name: "n", namespace: "ns" } }, { fieldManager: "op", force: true });
  assert.deepEqual(t.calls.map((c) => [c.method, c.path]), [
    ["POST", "/apis/demo.operator/v1/namespaces/ns/uuid"],
    ["PATCH", "/apis/demo.operator/v1/namespaces/ns/uuid/n"],
  ]);
  for (const c of t.calls) {
    assert.deepEqual([(c.body as { apiVersion: string }).apiVersion, (c.body as { kind: string }).kind], [
      "demo.operator/v1",
      "Uuid",
    ]);
  }
  assert.equal(t.calls[1].contentType, "application/apply-patch+yaml");
  assert.deepEqual(t.calls[1].query, { fieldManager: "op", force: true });
});

Deno.test("patch sends the content type of the patch type asked for", async () => {
  const t = setup(() => ({ metadata: { name: "x" } }));
  await t.client.patch({ namespace: "ns", name: "x" }, { a: 1 });
  await t.client.patch({ namespace: "ns", name: "x" }, [], { type: "json" });
  await t.client.patch({ namespace: "ns", name: "x" }, {}, { type: "strategic" });
  assert.deepEqual(t.calls.map((c) => c.contentType), [
    "application/merge-patch+json",
    "application/json-patch+json",
    "application/strategic-merge-patch+json",
  ]);
});

Deno.test("A cluster-scoped resource's paths carry no namespace even when the ref names one", async () => {
  const type = { group: "", version: "v1", kind: "Namespace", plural: "namespaces", namespaced: false };
  const t = setup(() => ({ metadata: { name: "x" } }), { type });
  await t.client.get({ namespace: "ns", name: "x" });
  assert.deepEqual(t.calls.map((c) => c.path), ["/api/v1/namespaces/x"]);
});

Deno.test("Names with reserved characters are percent-encoded in paths", async () => {
  const t = setup(() => ({ metadata: { name: "x" } }));
  await t.client.get({ namespace: "ns", name: "a/b c" });
  assert.deepEqual(t.calls.map((c) => c.path), ["/apis/demo.operator/v1/namespaces/ns/uuid/a%2Fb%20c"]);
});

Deno.test("cached reads the watch cache without an API call, and throws a TerminalError for a resource without one", () => {
  const store = new Store();
  store.upsert({ metadata: { namespace: "ns", name: "x", resourceVersion: "3" } });
  const t = setup(() => undefined, { store });
  assert.equal(t.client.cached({ namespace: "ns", name: "x" })?.metadata.resourceVersion, "3");
  assert.equal(t.client.cached({ namespace: "ns", name: "y" }), undefined);
  assert.throws(() => setup(() => undefined).client.cached({ namespace: "ns", name: "x" }), TerminalError);
  assert.equal(t.calls.length, 0);
});

Deno.test("withSignal passes the bound signal to every API call", async () => {
  const signals: (AbortSignal | undefined)[] = [];
  const t = setup(() => ({ metadata: { name: "x" } }));
  const api = t.deps.api;
  t.deps.api = {
    request: (m, p, o) => {
      signals.push(o?.signal);
      return api.request(m, p, o);
    },
  };
  const ac = new AbortController();
  await t.client.withSignal(ac.signal).get({ namespace: "ns", name: "x" });
  await t.client.get({ namespace: "ns", name: "x" });
  assert.deepEqual(signals, [ac.signal, undefined]);
});

Deno.test("The watch cache takes the answer of patchStatus, patch and apply, so the next cached() read is what was written", async () => {
  const store = new Store();
  const ref = { namespace: "ns", name: "x" };
  store.upsert({ metadata: { namespace: "ns", name: "x", resourceVersion: "7" }, spec: { a: 1 } });
  let rv = 7;
  const t = setup((c) => ({
    metadata: { namespace: "ns", name: "x", resourceVersion: String(++rv) },
    spec: { a: 1 },
    status: c.path.endsWith("/status") ? (c.body as { status: unknown }).status : undefined,
  }), { store });
  await t.client.patch(ref, { metadata: { finalizers: ["f"] } });
  assert.equal(t.client.cached(ref)?.metadata.resourceVersion, "8");
  await t.client.patchStatus(t.client.cached(ref)!, { uuid: "u-1" });
  assert.equal(t.calls[1].discardBody, false, "the answer is read for the cache");
  assert.deepEqual(t.calls[1].body, { metadata: { resourceVersion: "8" }, status: { uuid: "u-1" } });
  assert.equal(t.client.cached(ref)?.metadata.resourceVersion, "9");
  assert.deepEqual(t.client.cached(ref)?.status, { uuid: "u-1" });
  // The watch event of the first write, arriving late, does not take the cache back.
  store.upsert({ metadata: { namespace: "ns", name: "x", resourceVersion: "8" }, spec: { a: 1 } });
  assert.deepEqual(t.client.cached(ref)?.status, { uuid: "u-1" });
  await t.client.apply({ metadata: { namespace: "ns", name: "x" }, spec: { a: 1 } }, { fieldManager: "m" });
  assert.equal(t.client.cached(ref)?.metadata.resourceVersion, "10");
});

Deno.test("A status write without a watch cache still discards its answer (nothing would read it)", async () => {
  const t = setup(() => undefined);
  await t.client.patchStatus(object, { uuid: "u-1" });
  assert.equal(t.calls[0].discardBody, true);
});

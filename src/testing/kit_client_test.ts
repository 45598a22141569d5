import assert from "node:assert/strict";
import type { KubeClient } from "../kube/mod.ts";
import { ApiError } from "../kube/mod.ts";
import { kitClient } from "./kit_client.ts";

interface Call {
  method: string;
  path: string;
  opts: Record<string, unknown>;
}

/** A KubeClient stand-in that records calls and answers from `answer` (pure: no apiserver). */
function recorder(answer: (call: Call) => unknown = () => ({})) {
  const calls: Call[] = [];
  const kube = {
    request(method: string, path: string, opts: Record<string, unknown> = {}) {
      const call = { method, path, opts };
      calls.push(call);
      const out = answer(call);
      return out instanceof Error ? Promise.reject(out) : Promise.resolve(out);
    },
    listPage(path: string, opts: Record<string, unknown> = {}) {
      calls.push({ method: "LIST", path, opts });
      return Promise.resolve(
        opts.continueToken ? { items: [{ n: 2 }], resourceVersion: "1" } : {
          items: [{ n: 1 }],
          resourceVersion: "1",
          continueToken: "next",
        },
      );
    },
  } as unknown as KubeClient;
  return { kube, calls };
}

const configMaps = { group: "", version: "v1", kind: "ConfigMap", plural: "configmaps" };
const nodes = { group: "", version: "v1", kind: "Node", plural: "nodes", namespaced: false };
const sites = { group: "examples.operator-hub.dev", version: "v1", kind: "Website", plural: "websites" };

Deno.test("the kit's client builds each verb's path, fills apiVersion and kind in, and uses the patch types' content types", async () => {
  const { kube, calls } = recorder();
  const cm = kitClient(kube, configMaps);
  await cm.get({ namespace: "ns", name: "a" });
  await cm.create({ metadata: { name: "b", namespace: "ns" }, data: { k: "v" } });
  await cm.patch({ namespace: "ns", name: "b" }, { data: { k: "w" } });
  await cm.patch({ namespace: "ns", name: "b" }, [{ op: "remove", path: "/data" }], { type: "json" });
  await kitClient(kube, sites).patch({ namespace: "ns", name: "s" }, { status: {} }, { subresource: "status" });
  await kitClient(kube, sites).apply({ metadata: { name: "s", namespace: "ns" }, spec: { image: "x" } });
  await kitClient(kube, nodes).get({ name: "n1" });
  assert.deepEqual(calls.map((c) => `${c.method} ${c.path}`), [
    "GET /api/v1/namespaces/ns/configmaps/a",
    "POST /api/v1/namespaces/ns/configmaps",
    "PATCH /api/v1/namespaces/ns/configmaps/b",
    "PATCH /api/v1/namespaces/ns/configmaps/b",
    "PATCH /apis/examples.operator-hub.dev/v1/namespaces/ns/websites/s/status",
    "PATCH /apis/examples.operator-hub.dev/v1/namespaces/ns/websites/s",
    "GET /api/v1/nodes/n1",
  ]);
  assert.deepEqual(calls[1].opts.body, {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: "b", namespace: "ns" },
    data: { k: "v" },
  });
  assert.equal(calls[2].opts.contentType, "application/merge-patch+json");
  assert.equal(calls[3].opts.contentType, "application/json-patch+json");
  assert.equal(calls[5].opts.contentType, "application/apply-patch+yaml");
  assert.deepEqual(calls[5].opts.query, { fieldManager: "operator-hub-testing", force: true });
  assert.match(String(calls[5].opts.body), /"apiVersion":"examples.operator-hub.dev\/v1","kind":"Website"/);
});

Deno.test("find and delete treat a 404 as absent, other errors still reject, and list follows every page", async () => {
  const notFound = new ApiError({ method: "GET", path: "/x", status: 404, statusMessage: "not found" });
  const forbidden = new ApiError({ method: "GET", path: "/x", status: 403, statusMessage: "no" });
  let next: Error = notFound;
  const { kube, calls } = recorder(() => next);
  const cm = kitClient(kube, configMaps);
  assert.equal(await cm.find({ namespace: "ns", name: "gone" }), undefined);
  await cm.delete({ namespace: "ns", name: "gone" });
  next = forbidden;
  await assert.rejects(cm.find({ namespace: "ns", name: "x" }), /no|Forbidden|403/);
  assert.deepEqual(await cm.list({ namespace: "ns", labelSelector: "a=b" }), [{ n: 1 }, { n: 2 }]);
  const lists = calls.filter((c) => c.method === "LIST");
  assert.deepEqual(lists.map((c) => [c.path, c.opts.labelSelector, c.opts.continueToken]), [
    ["/api/v1/namespaces/ns/configmaps", "a=b", undefined],
    ["/api/v1/namespaces/ns/configmaps", "a=b", "next"],
  ]);
});

Deno.test("a namespaced resource without a namespace is refused before any request", () => {
  const { kube, calls } = recorder();
  assert.throws(
    () => kitClient(kube, configMaps).get({ name: "a" }),
    /ConfigMap a: a namespaced resource needs a namespace/,
  );
  assert.equal(calls.length, 0);
});

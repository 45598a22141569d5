// Unit tests for the per-cluster client factory, with an API client that records the requests it is given.
import assert from "node:assert/strict";
import type { ResourceType } from "../../kube/mod.ts";
import { type ApiClient, EventRecorder, TerminalError, trimObject } from "../../runtime/mod.ts";
import { silentLogger, VirtualClock } from "../../util/mod.ts";
import { ClusterClients } from "./_cluster_clients.ts";

const WIDGET: ResourceType = { group: "demo.operator", version: "v1", kind: "Widget", plural: "widgets" };
const CONFIG_MAP: ResourceType = { group: "", version: "v1", kind: "ConfigMap", plural: "configmaps" };

function setup() {
  const calls: { method: string; path: string; body?: unknown }[] = [];
  const api: ApiClient = {
    request: <T>(method: string, path: string, options?: { body?: unknown }) => {
      calls.push({ method, path, body: options?.body });
      return Promise.resolve({ metadata: { name: "w", namespace: "ns", resourceVersion: "1" } } as T);
    },
  };
  const recorder = new EventRecorder({
    api,
    component: "operator-hub",
    minLevel: "Normal",
    clock: new VirtualClock(),
    logger: silentLogger(),
  });
  return { calls, clients: new ClusterClients("prod", api, recorder) };
}

Deno.test("ClusterClients.resource() builds a client of the declared verbs through the cluster's API", async () => {
  const { calls, clients } = setup();
  const { client, info } = clients.resource({ operator: "w", type: WIDGET, verbs: ["get"], project: trimObject });
  assert.deepEqual(info, { statusSubresource: true });
  assert.equal(client.type, WIDGET);
  await client.get({ namespace: "ns", name: "w" });
  assert.deepEqual(calls.map((c) => `${c.method} ${c.path}`), ["GET /apis/demo.operator/v1/namespaces/ns/widgets/w"]);
  await assert.rejects(client.delete({ namespace: "ns", name: "w" }), TerminalError);
  assert.equal(calls.length, 1, "an undeclared verb never reaches the API");
});

Deno.test("ClusterClients.events() records events naming the type's apiVersion and kind", async () => {
  const { calls, clients } = setup();
  await clients.events(CONFIG_MAP).record({ metadata: { name: "c", namespace: "ns" } }, "Normal", "Seen", "hello");
  await clients.events(WIDGET).record({ metadata: { name: "w", namespace: "ns" } }, "Normal", "Seen", "hello");
  const involved = calls.map((c) =>
    (c.body as { involvedObject: { apiVersion: string; kind: string } }).involvedObject
  );
  assert.deepEqual(involved.map((o) => `${o.apiVersion} ${o.kind}`), ["v1 ConfigMap", "demo.operator/v1 Widget"]);
});

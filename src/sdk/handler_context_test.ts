// Unit tests for the handler context: the object's parts, events, clients for other kinds in any cluster, adopt.
import assert from "node:assert/strict";
import type { ResourceType } from "../kube/mod.ts";
import type { ClusterConnection, ReconcileScope, ResourceClient, StoredObject } from "../runtime/mod.ts";
import { silentLogger } from "../util/mod.ts";
import { contextFor } from "./handler_context.ts";
import { kinds } from "./kinds.ts";

const WEBSITES: ResourceType = {
  group: "examples.operator-hub.dev",
  version: "v1",
  kind: "Website",
  plural: "websites",
};

function scopeWith(events: unknown[][], engaged: string[]): ReconcileScope<StoredObject> {
  return {
    client: {},
    events: {
      record: (o: unknown, type: string, reason: string, message: string) => {
        events.push([o, type, reason, message]);
        return Promise.resolve();
      },
    },
    cluster: (name: string): ClusterConnection | undefined =>
      engaged.includes(name)
        ? { name, client: (type?: ResourceType) => ({ type, cluster: name }) as unknown as ResourceClient<never> }
        : undefined,
    clusters: () => engaged,
    logger: silentLogger(),
    signal: new AbortController().signal,
  } as unknown as ReconcileScope<StoredObject>;
}

Deno.test("contextFor exposes the object's parts and the request, and info/warn post events about the object", async () => {
  const events: unknown[][] = [];
  const scope = scopeWith(events, ["prod"]);
  const obj: StoredObject = { metadata: { name: "x", namespace: "ns", uid: "u-1" }, spec: { size: 1 } };
  const ctx = contextFor(obj, { cluster: "prod", namespace: "ns", name: "x" }, scope, WEBSITES, {
    diff: [],
    old: 1,
    new: 2,
  });
  assert.equal(ctx.body, obj);
  assert.deepEqual(ctx.spec, { size: 1 });
  assert.deepEqual(ctx.status, {}, "an absent status reads as {}");
  assert.deepEqual([ctx.cluster, ctx.namespace, ctx.name, ctx.uid], ["prod", "ns", "x", "u-1"]);
  assert.deepEqual([ctx.old, ctx.new], [1, 2]);
  assert.equal(ctx.signal, scope.signal);
  await ctx.info("made it");
  await ctx.warn("careful");
  await ctx.info("custom", "Custom");
  assert.deepEqual(events, [
    [obj, "Normal", "Handled", "made it"],
    [obj, "Warning", "HandlerWarning", "careful"],
    [obj, "Normal", "Custom", "custom"],
  ]);
});

Deno.test("clientFor reaches a kind in the object's own cluster by default and in any engaged one by name, and names a cluster that is not engaged", () => {
  const obj: StoredObject = { metadata: { name: "x", namespace: "ns", uid: "u-1" } };
  const ctx = contextFor(
    obj,
    { cluster: "prod", namespace: "ns", name: "x" },
    scopeWith([], ["prod", "dev"]),
    WEBSITES,
    {
      diff: [],
    },
  );
  const own = ctx.clientFor(kinds.Deployment) as unknown as { type: ResourceType; cluster: string };
  assert.deepEqual([own.type, own.cluster], [kinds.Deployment, "prod"]);
  const other = ctx.clientFor(kinds.Namespace, "dev") as unknown as { type: ResourceType; cluster: string };
  assert.deepEqual([other.type, other.cluster], [kinds.Namespace, "dev"]);
  assert.throws(
    () => ctx.clientFor(kinds.Secret, "staging"),
    /cannot reach Secret in cluster staging: it is not engaged/,
  );
  assert.deepEqual(ctx.clusters(), ["prod", "dev"]);
});

Deno.test("adopt in a handler context takes the handled object as the parent, in its cluster", () => {
  const obj: StoredObject = { metadata: { name: "site", namespace: "web", uid: "u-9" } };
  const ctx = contextFor(obj, { cluster: "prod", namespace: "web", name: "site" }, scopeWith([], ["prod"]), WEBSITES, {
    diff: [],
  });
  const child = ctx.adopt({ metadata: { name: "site" } }, { type: kinds.Service });
  assert.equal(child.metadata.namespace, "web");
  assert.deepEqual(child.metadata.ownerReferences, [{
    apiVersion: "examples.operator-hub.dev/v1",
    kind: "Website",
    name: "site",
    uid: "u-9",
    controller: true,
    blockOwnerDeletion: true,
  }]);
  const remote = ctx.adopt({ metadata: { name: "site" } }, { type: kinds.Service, cluster: "dev" });
  assert.equal(remote.metadata.ownerReferences, undefined, "owner references never cross clusters");
  assert.equal(remote.metadata.annotations["operator-hub.dev/parent"], "prod/web/site");
});

// Unit tests of one operator's slot wiring: shared watches, the change filter, and the cache observer's listener.

import assert from "node:assert/strict";
import type { NamespacedName, QueuePriority } from "../../queue/mod.ts";
import { type ApiClient, EventRecorder, type Informer, type Operator, trimObject } from "../../runtime/mod.ts";
import { Logger, silentLogger, VirtualClock } from "../../util/mod.ts";
import { ClusterClients } from "./_cluster_clients.ts";
import { cacheListener, wireSlot } from "./_slot_wiring.ts";

const WIDGETS = { group: "demo.operator", version: "v1", kind: "Widget", plural: "widgets" };

function operator(name: string, extra: Partial<Operator> = {}): Operator {
  return {
    name,
    resource: WIDGETS,
    verbs: [],
    events: false,
    uses: [],
    reconciler: { reconcile: () => Promise.resolve() },
    ...extra,
  };
}

/** Wiring for cluster "prod" over an API that answers nothing; `queued` records what reaches `onChange`. */
function wiring(log = silentLogger()) {
  const api: ApiClient = { request: () => Promise.reject(new Error("no API in this test")) };
  const clock = new VirtualClock();
  const events = new EventRecorder({ api, component: "operator-hub", minLevel: "Normal", clock, logger: log });
  const queued: { cluster: string; operator: string; requests: readonly NamespacedName[]; priority: QueuePriority }[] =
    [];
  const informers = new Map<string, Informer>();
  return {
    queued,
    informers,
    w: {
      cluster: "prod",
      informers,
      clients: new ClusterClients("prod", api, events),
      onChange: (cluster: string, operator: string, requests: readonly NamespacedName[], priority: QueuePriority) =>
        queued.push({ cluster, operator, requests, priority }),
      lookup: () => undefined,
      clusters: () => ["prod"],
      clock,
      log,
    },
  };
}

Deno.test("wireSlot shares one informer among operators of a resource and projection, never with one that does not own it here", () => {
  const { w, informers } = wiring();
  const a = wireSlot(operator("a"), w).slot;
  const b = wireSlot(operator("b"), w).slot;
  const own = wireSlot(operator("c", { project: (o) => trimObject(o) }), w).slot;
  const elsewhere = wireSlot(operator("d", { resourceClusters: (c) => c !== "prod" }), w).slot;
  assert.equal(a.informer, b.informer);
  assert.notEqual(own.informer, a.informer);
  assert.notEqual(elsewhere.informer, a.informer);
  assert.equal(elsewhere.owns, false);
  assert.equal(informers.size, 2, "the not-owning operator's informer is not shared");
  assert.equal(a.preflight?.state, "registering");
});

Deno.test("wireSlot passes changed keys on as requests, minus the objects needsReconcile says need nothing", () => {
  const { w, queued } = wiring();
  const { slot } = wireSlot(operator("a", { needsReconcile: (o) => !(o as { status?: unknown }).status }), w);
  const store = slot.informer.store;
  const done = store.upsert({ metadata: { namespace: "ns", name: "done", resourceVersion: "1" }, status: {} });
  const fresh = store.upsert({ metadata: { namespace: "ns", name: "fresh", resourceVersion: "1" } });
  slot.changed([done, fresh, "ns/gone"], "live");
  assert.deepEqual(queued, [{
    cluster: "prod",
    operator: "a",
    requests: [{ namespace: "ns", name: "fresh" }, { namespace: "ns", name: "gone" }],
    priority: "live",
  }]);
});

Deno.test("cacheListener tells the observer of each key and logs an observer's failure without stopping", () => {
  const lines: Record<string, unknown>[] = [];
  const log = new Logger({ level: "info", write: (l) => lines.push(JSON.parse(l)) });
  const { w } = wiring(log);
  const seen: string[] = [];
  const observer = {
    changed: (cluster: string, key: string) => {
      if (key === "ns/bad") throw new Error("index broken");
      seen.push(`${cluster} ${key}`);
    },
    forget: () => {},
  };
  const { slot } = wireSlot(operator("a", { cacheObserver: observer }), w);
  assert.equal(cacheListener(wireSlot(operator("b"), w).slot, "prod", log), undefined);
  cacheListener(slot, "prod", log)!(["ns/x", "ns/bad", "ns/y"]);
  assert.deepEqual(seen, ["prod ns/x", "prod ns/y"]);
  assert.equal(lines.length, 1);
  assert.equal(lines[0].msg, "cache observer failed");
  assert.equal(lines[0].key, "ns/bad");
});

// Unit tests of the path from a watch event to the queue: shared informers, the change filter, the cache observer's
// listener, and one Request object from the informer to reconcile().

import assert from "node:assert/strict";
import type { KubeClient } from "../../kube/mod.ts";
import { FairWorkQueue, type QueuePriority } from "../../queue/mod.ts";
import {
  type ApiClient,
  Controller,
  EventRecorder,
  fieldProjection,
  type Informer,
  type ListWatchClient,
  type Operator,
  type Request,
  trimObject,
} from "../../runtime/mod.ts";
import { Logger, silentLogger, VirtualClock } from "../../util/mod.ts";
import { ClusterClients } from "./_cluster_clients.ts";
import { cacheListener, joinWatch, type SlotWiring, wireSlot } from "./watch_to_queue.ts";
import { ReleasedWatchClient } from "../../../dev/support/released_watch.ts";

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

const widget = (name: string, rv: string) => ({ metadata: { namespace: "ns", name, resourceVersion: rv } });

/** Lets the watch loop and the controller's workers run until nothing is left to do now (no virtual time passes). */
async function settle(): Promise<void> {
  for (let i = 0; i < 10; i++) await new Promise((resolve) => setTimeout(resolve, 0));
}

/** Wiring for cluster "prod" over an API that answers nothing; `queued` records what reaches `onChange`. */
function wiring(log = silentLogger(), client: ListWatchClient = new ReleasedWatchClient([], [])) {
  const api: ApiClient = { request: () => Promise.reject(new Error("no API in this test")) };
  const clock = new VirtualClock();
  const events = new EventRecorder({ api, component: "operator-hub", minLevel: "Normal", clock, logger: log });
  const queued: { operator: string; requests: readonly Request[]; priority: QueuePriority }[] = [];
  const informers = new Map<string, Informer>();
  const w: SlotWiring = {
    watch: { cluster: "prod", client: client as KubeClient, namespaces: ["ns"], clock, log },
    informers,
    clients: new ClusterClients("prod", api, events),
    onChange: (operator, requests, priority) => queued.push({ operator, requests, priority }),
    lookup: () => undefined,
    clusters: () => ["prod"],
  };
  return { queued, informers, clock, w };
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
  assert.equal(a.informer.cluster, "prod");
});

Deno.test("wireSlot passes changed requests on as they are, minus the objects needsReconcile says need nothing", () => {
  const { w, queued } = wiring();
  const { slot } = wireSlot(operator("a", { needsReconcile: (o) => !(o as { status?: unknown }).status }), w);
  const store = slot.informer.store;
  store.upsert({ metadata: { namespace: "ns", name: "done", resourceVersion: "1" }, status: {} });
  store.upsert({ metadata: { namespace: "ns", name: "fresh", resourceVersion: "1" } });
  const [done, fresh, gone] = ["done", "fresh", "gone"].map((name) => ({ cluster: "prod", namespace: "ns", name }));
  slot.changed([done, fresh, gone], "live");
  assert.deepEqual(queued, [{ operator: "a", requests: [fresh, gone], priority: "live" }]);
  assert.equal(queued[0].requests[0], fresh, "the same request object, not a copy");
});

Deno.test("with checkReads, needsReconcile sees the guarded object: an undeclared read passes the object on, logged once", () => {
  const lines: Record<string, unknown>[] = [];
  const log = new Logger({ level: "info", write: (l) => lines.push(JSON.parse(l)) });
  const { w, queued } = wiring(log);
  w.checkReads = true;
  const reads = ["status.state"];
  const careless = operator("careless", {
    reads,
    project: fieldProjection(reads),
    needsReconcile: (o) => (o as { status?: { state?: string; uuid?: string } }).status?.uuid === undefined,
  });
  const careful = operator("careful", {
    reads,
    project: fieldProjection(reads),
    needsReconcile: (o) => (o as { status?: { state?: string } }).status?.state !== "Ok",
  });
  const slots = [careless, careful].map((op) => wireSlot(op, w).slot);
  const requests = ["a", "b"].map((name) => ({ cluster: "prod", namespace: "ns", name }));
  for (const slot of slots) {
    for (const r of requests) {
      slot.informer.store.upsert({ ...widget(r.name, "1"), status: { state: "Ok", uuid: "u" } });
    }
    slot.changed(requests, "live");
  }
  assert.deepEqual(queued.map((q) => [q.operator, q.requests.length]), [["careless", 2]], "careful's objects are done");
  assert.equal(lines.length, 1, "one line for the slot, not one per object");
  assert.equal(lines[0].msg, "needsReconcile threw; its objects are reconciled");
  assert.match(String(lines[0].error), /operator careless read Widget field status\.uuid/);
});

Deno.test("cacheListener tells the observer of each request and logs an observer's failure without stopping", () => {
  const lines: Record<string, unknown>[] = [];
  const log = new Logger({ level: "info", write: (l) => lines.push(JSON.parse(l)) });
  const { w } = wiring(log);
  const seen: string[] = [];
  const observer = {
    changed: (request: Request) => {
      if (request.name === "bad") throw new Error("index broken");
      seen.push(`${request.cluster} ${request.namespace}/${request.name}`);
    },
    forget: () => {},
  };
  const { slot } = wireSlot(operator("a", { cacheObserver: observer }), w);
  assert.equal(cacheListener(wireSlot(operator("b"), w).slot, log), undefined);
  const requests = ["x", "bad", "y"].map((name) => ({ cluster: "prod", namespace: "ns", name }));
  cacheListener(slot, log)!(requests, "live");
  assert.deepEqual(seen, ["prod ns/x", "prod ns/y"]);
  assert.equal(lines.length, 1);
  assert.equal(lines[0].msg, "cache observer failed");
  assert.deepEqual([lines[0].namespace, lines[0].name], ["ns", "bad"]);
});

Deno.test("a watch event reaches reconcile() as the one Request object the informer made, after the cache observer saw it", async () => {
  const client = new ReleasedWatchClient([widget("listed", "1")], [{ type: "ADDED", object: widget("added", "11") }]);
  const { w, clock } = wiring(silentLogger(), client);
  const told: Request[] = [];
  const order: string[] = [];
  const reconciled: Request[] = [];
  const op = operator("a", {
    cacheObserver: { changed: (r) => order.push(`observed ${r.name}`), forget: () => {} },
    reconciler: {
      reconcile: (request) => {
        order.push(`reconciled ${request.name}`);
        reconciled.push(request);
        return Promise.resolve();
      },
    },
  });
  const queue = new FairWorkQueue({ clock });
  const controller = new Controller({
    queue,
    target: (cluster, operator) => cluster === "prod" && operator === "a" ? slot.target : undefined,
    concurrency: 1,
    clock,
    logger: silentLogger(),
  });
  w.onChange = (operator, requests, priority) => controller.enqueue(operator, requests, priority);
  const { slot } = wireSlot(op, w);
  slot.informer.addListener((requests) => told.push(...requests));
  const stop = new AbortController();
  const running = controller.start(stop.signal);
  joinWatch(slot, silentLogger(), stop.signal);
  await settle();
  client.releaseEvents();
  await settle();
  assert.deepEqual(order, ["observed listed", "reconciled listed", "observed added", "reconciled added"]);
  assert.deepEqual(reconciled.map((r) => `${r.cluster}/${r.namespace}/${r.name}`), ["prod/ns/listed", "prod/ns/added"]);
  assert.equal(reconciled[0], told[0], "the listed object's request, as the informer made it");
  assert.equal(reconciled[1], told[1], "the watch event's request, as the informer made it");
  stop.abort();
  await Promise.all([running, slot.informer.stopped]);
});

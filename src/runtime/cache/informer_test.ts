// Unit tests for the informer's fan-out, replay and lifecycle, on virtual time with a scripted list/watch client.
import assert from "node:assert/strict";
import type { WatchEvent } from "../../kube/mod.ts";
import type { QueuePriority, Request } from "../../queue/mod.ts";
import { VirtualClock } from "../../util/mod.ts";
import { Informer } from "./informer.ts";
import { trimObject } from "./store.ts";
import { Watcher } from "./watcher.ts";
import { ReleasedWatchClient } from "../../../dev/support/released_watch.ts";

const obj = (name: string, rv: string) => ({ metadata: { name, namespace: "ns", resourceVersion: rv } });

/** Lets the watch loop run until nothing is left to do now (no virtual time passes). */
async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setTimeout(resolve, 0));
}

function setup(items: unknown[], events: WatchEvent[] = []) {
  const clock = new VirtualClock(1_000_000);
  const client = new ReleasedWatchClient(items, events);
  let made = 0;
  const informer = new Informer({
    cluster: "prod",
    projection: trimObject,
    watches: (store, onChange) => {
      made++;
      return [new Watcher({ path: "/apis/g/v1/things", client, store, onChange, clock })];
    },
  });
  const start = (signal: AbortSignal) => informer.start(signal);
  return { informer, client, start, made: () => made };
}

/** A request as `cluster:namespace/name`, for comparing what listeners were told. */
const text = (r: Request) => `${r.cluster}:${r.namespace}/${r.name}`;

Deno.test("Informer tells every listener every change as requests of its cluster, in the order added, once the store holds it", async () => {
  const { informer, client, start } = setup([obj("a", "1")], [{ type: "ADDED", object: obj("b", "11") }]);
  const seen: string[] = [];
  const told: (readonly Request[])[] = [];
  const listener = (name: string) => (requests: readonly Request[], priority: QueuePriority) => {
    told.push(requests);
    for (const r of requests) seen.push(`${name} ${text(r)}@${priority} ${informer.cached(r) ? "cached" : "missing"}`);
  };
  informer.addListener(listener("first"));
  informer.addListener(listener("second"));
  const abort = new AbortController();
  start(abort.signal);
  await settle();
  client.releaseEvents();
  await settle();
  assert.deepEqual(seen, [
    "first prod:ns/a@low cached",
    "second prod:ns/a@low cached",
    "first prod:ns/b@live cached",
    "second prod:ns/b@live cached",
  ]);
  assert.equal(told[0], told[1], "one array of requests per change, shared by the listeners");
  abort.abort();
  await informer.stopped;
});

Deno.test("Informer.addListener() with replay first tells what is cached; without, only later changes", async () => {
  const { informer, client, start } = setup([obj("a", "1"), obj("b", "2")], [{
    type: "MODIFIED",
    object: obj("a", "12"),
  }]);
  const abort = new AbortController();
  start(abort.signal);
  await settle();
  const replayed: string[] = [];
  const quiet: string[] = [];
  informer.addListener((requests, priority) => replayed.push(...requests.map((r) => `${text(r)}@${priority}`)), "low");
  informer.addListener((requests, priority) => quiet.push(...requests.map((r) => `${text(r)}@${priority}`)));
  assert.deepEqual(replayed, ["prod:ns/a@low", "prod:ns/b@low"]);
  assert.deepEqual(quiet, []);
  client.releaseEvents();
  await settle();
  assert.deepEqual(replayed, ["prod:ns/a@low", "prod:ns/b@low", "prod:ns/a@live"]);
  assert.deepEqual(quiet, ["prod:ns/a@live"]);
  abort.abort();
  await informer.stopped;
});

Deno.test("Informer builds its watches on first use, starts them once and settles stopped only after they stopped", async () => {
  const { informer, client, start, made } = setup([obj("a", "1")]);
  client.releaseEvents();
  let stopped = false;
  await informer.stopped; // never started: settles at once
  assert.equal(informer.started, false);
  assert.equal(made(), 0, "an informer nobody read or started holds no watch");
  assert.equal(informer.watchers.length, 1, "built when read before start, so health can read it");
  assert.equal(made(), 1);
  assert.equal(informer.watchers[0].snapshot().phase, "connecting");
  assert.equal(client.lists, 0, "nothing listed before start");
  const abort = new AbortController();
  start(abort.signal);
  start(abort.signal);
  assert.equal(made(), 1, "start builds no watches");
  assert.equal(informer.started, true);
  assert.equal(informer.watchers.length, 1);
  informer.stopped.then(() => stopped = true);
  await settle();
  assert.equal(client.lists, 1);
  assert.equal(stopped, false, "running until the signal aborts");
  abort.abort();
  await informer.stopped;
  assert.equal(stopped, true);
  assert.equal(informer.store.size, 1, "a stop keeps the cache");
});

Deno.test("Informer.stop() stops the watches and empties the store; start then builds them afresh", async () => {
  const { informer, client, start, made } = setup([obj("a", "1")]);
  client.releaseEvents();
  const seen: string[] = [];
  informer.addListener((requests, priority) => seen.push(...requests.map((r) => `${text(r)}@${priority}`)));
  const abort = new AbortController();
  start(abort.signal);
  await settle();
  assert.deepEqual([informer.store.size, seen], [1, ["prod:ns/a@low"]]);
  const before = informer.watchers[0];
  await informer.stop();
  assert.equal(made(), 1, "stop builds nothing");
  assert.deepEqual([informer.started, informer.watchers.length, informer.store.size], [false, 1, 0]);
  assert.notEqual(informer.watchers[0], before, "built afresh");
  assert.equal(abort.signal.aborted, false, "stop aborts only the informer's own watches");
  start(abort.signal);
  await settle();
  assert.equal(made(), 2);
  assert.equal(client.lists, 2);
  assert.deepEqual([informer.store.size, seen], [1, ["prod:ns/a@low", "prod:ns/a@low"]], "listeners stay");
  abort.abort();
  await informer.stopped;
  await new Informer({ cluster: "prod", watches: () => [] }).stop(); // never started: settles at once
});

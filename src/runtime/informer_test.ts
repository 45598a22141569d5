// Unit tests for the informer's fan-out, replay and lifecycle, on virtual time with a scripted list/watch client.
import assert from "node:assert/strict";
import type { WatchEvent } from "../kube/mod.ts";
import type { QueuePriority } from "../queue/mod.ts";
import { VirtualClock } from "../util/mod.ts";
import { Informer } from "./informer.ts";
import { trimObject } from "./store.ts";
import { type ListWatchClient, Watcher } from "./watcher.ts";

const obj = (name: string, rv: string) => ({ metadata: { name, namespace: "ns", resourceVersion: rv } });

/** Lists `items`, then streams `events` once the test releases them, then holds the stream open until aborted. */
class ScriptedClient implements ListWatchClient {
  lists = 0;
  #release: () => void = () => {};
  readonly #released = new Promise<void>((resolve) => this.#release = resolve);
  constructor(private items: unknown[], private events: WatchEvent[]) {}
  releaseEvents(): void {
    this.#release();
  }
  resetConnections(): void {}
  listPage() {
    this.lists++;
    return Promise.resolve({ items: this.items, resourceVersion: "10" });
  }
  watch(_path: string, opts: { signal?: AbortSignal; onOpen?: () => void }): AsyncIterable<WatchEvent> {
    const { events } = this;
    const released = this.#released;
    return (async function* () {
      opts.onOpen?.();
      await released;
      for (const ev of events) if (!opts.signal?.aborted) yield ev;
      await new Promise<void>((resolve) => {
        if (opts.signal?.aborted) resolve();
        else opts.signal?.addEventListener("abort", () => resolve(), { once: true });
      });
    })();
  }
}

/** Lets the watch loop run until nothing is left to do now (no virtual time passes). */
async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setTimeout(resolve, 0));
}

function setup(items: unknown[], events: WatchEvent[] = []) {
  const clock = new VirtualClock(1_000_000);
  const client = new ScriptedClient(items, events);
  const informer = new Informer(trimObject);
  let made = 0;
  const start = (signal: AbortSignal) =>
    informer.start((store, onChange) => {
      made++;
      return [new Watcher({ path: "/apis/g/v1/things", client, store, onChange, clock })];
    }, signal);
  return { informer, client, start, made: () => made };
}

Deno.test("Informer tells every listener every change, in the order added, once the store holds it", async () => {
  const { informer, client, start } = setup([obj("a", "1")], [{ type: "ADDED", object: obj("b", "11") }]);
  const seen: string[] = [];
  const listener = (name: string) => (keys: string[], priority: QueuePriority) => {
    for (const key of keys) seen.push(`${name} ${key}@${priority} ${informer.store.get(key) ? "cached" : "missing"}`);
  };
  informer.addListener(listener("first"));
  informer.addListener(listener("second"));
  const abort = new AbortController();
  start(abort.signal);
  await settle();
  client.releaseEvents();
  await settle();
  assert.deepEqual(seen, [
    "first ns/a@low cached",
    "second ns/a@low cached",
    "first ns/b@live cached",
    "second ns/b@live cached",
  ]);
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
  informer.addListener((keys, priority) => replayed.push(...keys.map((k) => `${k}@${priority}`)), "low");
  informer.addListener((keys, priority) => quiet.push(...keys.map((k) => `${k}@${priority}`)));
  assert.deepEqual(replayed, ["ns/a@low", "ns/b@low"]);
  assert.deepEqual(quiet, []);
  client.releaseEvents();
  await settle();
  assert.deepEqual(replayed, ["ns/a@low", "ns/b@low", "ns/a@live"]);
  assert.deepEqual(quiet, ["ns/a@live"]);
  abort.abort();
  await informer.stopped;
});

Deno.test("Informer starts its watches once and settles stopped only after they stopped", async () => {
  const { informer, client, start, made } = setup([obj("a", "1")]);
  client.releaseEvents();
  let stopped = false;
  await informer.stopped; // never started: settles at once
  assert.equal(informer.started, false);
  assert.equal(informer.watchers.length, 0);
  const abort = new AbortController();
  start(abort.signal);
  start(abort.signal);
  assert.equal(made(), 1, "the second start builds no watches");
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
  informer.addListener((keys, priority) => seen.push(...keys.map((k) => `${k}@${priority}`)));
  const abort = new AbortController();
  start(abort.signal);
  await settle();
  assert.deepEqual([informer.store.size, seen], [1, ["ns/a@low"]]);
  await informer.stop();
  assert.deepEqual([informer.started, informer.watchers.length, informer.store.size], [false, 0, 0]);
  assert.equal(abort.signal.aborted, false, "stop aborts only the informer's own watches");
  start(abort.signal);
  await settle();
  assert.equal(made(), 2);
  assert.equal(client.lists, 2);
  assert.deepEqual([informer.store.size, seen], [1, ["ns/a@low", "ns/a@low"]], "listeners stay");
  abort.abort();
  await informer.stopped;
  await new Informer(trimObject).stop(); // never started: settles at once
});

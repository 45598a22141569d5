// Unit tests for the controller loop, on virtual time.
import assert from "node:assert/strict";
import { FairWorkQueue } from "../queue/mod.ts";
import { silentLogger, VirtualClock } from "../util/mod.ts";
import { Controller, type ReconcileOutcome } from "./controller.ts";
import { type Reconciler, type Request, TerminalError } from "./reconciler.ts";
import { KubeResourceClient } from "./kube_resource_client.ts";
import { requestOf, Store, trimObject } from "./cache/store.ts";

const target = (reconcile: Reconciler["reconcile"]) => {
  const events = { record: () => Promise.resolve() };
  const client = new KubeResourceClient({
    api: { request: () => Promise.reject(new Error("no API in this test")) },
    cluster: "a",
    operator: "op",
    type: { group: "g", version: "v1", kind: "K", plural: "ks" },
    verbs: new Set(),
    store: new Store(),
    project: trimObject,
    info: { statusSubresource: true },
    rediscover: () => Promise.resolve({ statusSubresource: true }),
    events,
  });
  return { reconciler: { reconcile }, client, events, cluster: () => undefined };
};

function setup(reconcile: Reconciler["reconcile"], options: { concurrency?: number; timeoutMs?: number } = {}) {
  const clock = new VirtualClock(0);
  const queue = new FairWorkQueue({ clock });
  const outcomes: [string, ReconcileOutcome][] = [];
  const clusters = new Map([["a", target(reconcile)], ["b", target(reconcile)]]);
  const controller = new Controller({
    queue,
    target: (name, operator) => operator === "op" ? clusters.get(name) : undefined,
    concurrency: options.concurrency ?? 2,
    reconcileTimeoutMs: options.timeoutMs ?? 1000,
    drainTimeoutMs: 500,
    clock,
    logger: silentLogger(),
    observer: { reconciled: (c, _op, o) => outcomes.push([c, o]) },
  });
  const stop = new AbortController();
  const done = controller.start(stop.signal);
  return { clock, queue, controller, outcomes, stop, done, clusters };
}

Deno.test("Controller retries a failing reconcile with growing backoff and forgets it after success", async () => {
  const calls: number[] = [];
  const t = setup(() => {
    calls.push(t.clock.now());
    return calls.length < 4 ? Promise.reject(new Error("transient")) : Promise.resolve();
  });
  t.controller.enqueue("op", ["ns/x"].map((k) => requestOf("a", k)));
  await t.clock.advance(1000);
  assert.equal(calls.length, 4);
  // 5 ms, 10 ms, 20 ms between attempts (client-go's per-item exponential backoff).
  assert.deepEqual(calls.slice(1).map((c, i) => c - calls[i]), [5, 10, 20]);
  assert.equal(
    t.queue.numRequeues({ operator: "op", request: { cluster: "a", namespace: "ns", name: "x" } }),
    0,
    "forgotten after success",
  );
  assert.deepEqual(t.outcomes.map(([, o]) => o), ["error", "error", "error", "success"]);
  t.stop.abort();
  await t.done;
});

Deno.test("Controller does not retry a TerminalError", async () => {
  let calls = 0;
  const t = setup(() => {
    calls++;
    return Promise.reject(new TerminalError("cannot be fixed by retrying"));
  });
  t.controller.enqueue("op", ["ns/x"].map((k) => requestOf("a", k)));
  await t.clock.advance(10_000);
  assert.equal(calls, 1);
  assert.deepEqual(t.outcomes, [["a", "terminal"]]);
  t.stop.abort();
  await t.done;
});

Deno.test("Controller abandons a reconcile that hangs past the timeout, retries it, and keeps serving other keys", async () => {
  const seen: string[] = [];
  let hangs = 1;
  const t = setup((req: Request, ctx) => {
    seen.push(`${req.name}@${t.clock.now()}`);
    if (req.name === "stuck" && hangs-- > 0) {
      return new Promise<void>((resolve) => ctx.signal.addEventListener("abort", () => resolve(), { once: true }));
    }
    return Promise.resolve();
  }, { concurrency: 1, timeoutMs: 1000 });
  t.controller.enqueue("op", ["ns/stuck"].map((k) => requestOf("a", k)));
  await t.clock.advance(10);
  t.controller.enqueue("op", ["ns/other"].map((k) => requestOf("b", k)));
  await t.clock.advance(1100);
  // With one worker, "other" could only run because the hung reconcile was abandoned at 1000 ms.
  assert.ok(seen.includes("other@1000"), seen.join(", "));
  assert.ok(seen.some((s) => s.startsWith("stuck@") && s !== "stuck@0"), `stuck was retried: ${seen.join(", ")}`);
  assert.deepEqual(t.outcomes.map(([c, o]) => `${c}:${o}`).slice(0, 2), ["a:error", "b:success"]);
  t.stop.abort();
  await t.done;
});

Deno.test("Controller never reconciles the same key twice at once, and reruns it once if it changed meanwhile", async () => {
  let running = 0;
  let maxRunning = 0;
  let runs = 0;
  const t = setup(async () => {
    running++;
    runs++;
    maxRunning = Math.max(maxRunning, running);
    await t.clock.sleep(100);
    running--;
  }, { concurrency: 4 });
  t.controller.enqueue("op", ["ns/x"].map((k) => requestOf("a", k)));
  await t.clock.advance(10);
  for (let i = 0; i < 5; i++) t.controller.enqueue("op", ["ns/x"].map((k) => requestOf("a", k)));
  await t.clock.advance(500);
  assert.equal(maxRunning, 1);
  assert.equal(runs, 2, "one run, plus one for the adds made while it ran");
  t.stop.abort();
  await t.done;
});

Deno.test("Controller skips keys of a cluster that was disengaged", async () => {
  const calls: string[] = [];
  const t = setup((req: Request) => {
    calls.push(`${req.cluster}/${req.namespace}/${req.name}`);
    return Promise.resolve();
  });
  // Positive control: the same key in the same cluster is reconciled while the cluster is engaged.
  t.controller.enqueue("op", ["ns/x"].map((k) => requestOf("b", k)));
  await t.clock.advance(100);
  assert.deepEqual(calls, ["b/ns/x"], "an engaged cluster's key is reconciled");
  assert.deepEqual(t.outcomes, [["b", "success"]]);
  t.clusters.delete("b");
  t.controller.enqueue("op", ["ns/x"].map((k) => requestOf("b", k)));
  // The other cluster still reconciles in the same window, so the workers were running while b's key was skipped.
  t.controller.enqueue("op", ["ns/x"].map((k) => requestOf("a", k)));
  await t.clock.advance(100);
  assert.deepEqual(calls, ["b/ns/x", "a/ns/x"], "b's key is skipped once b is disengaged; a's is reconciled");
  assert.deepEqual(t.outcomes, [["b", "success"], ["a", "success"]]);
  assert.equal(
    t.queue.numRequeues({ operator: "op", request: { cluster: "b", namespace: "ns", name: "x" } }),
    0,
    "a skipped key is forgotten, not retried",
  );
  t.stop.abort();
  await t.done;
});

Deno.test("Controller.start() lets an in-flight reconcile finish on shutdown, within the drain timeout", async () => {
  let finished = false;
  const t = setup(async () => {
    await t.clock.sleep(200);
    finished = true;
  });
  t.controller.enqueue("op", ["ns/x"].map((k) => requestOf("a", k)));
  await t.clock.advance(10);
  t.stop.abort();
  let settled = false;
  t.done.then(() => (settled = true));
  await t.clock.advance(50);
  assert.equal(settled, false, "start() must wait for the in-flight reconcile");
  await t.clock.advance(200);
  assert.equal(finished, true);
  assert.equal(settled, true);
});

Deno.test("Controller.setConcurrency() starts more workers at once and, lowered, lets the extra ones finish and leave", async () => {
  const waiting: (() => void)[] = [];
  let running = 0;
  let most = 0;
  const t = setup(() => {
    most = Math.max(most, ++running);
    return new Promise<void>((resolve) => waiting.push(() => (running--, resolve())));
  }, { concurrency: 2, timeoutMs: 1_000_000 });
  t.controller.enqueue("op", ["ns/1", "ns/2", "ns/3", "ns/4", "ns/5", "ns/6"].map((k) => requestOf("a", k)));
  await t.clock.advance(1);
  assert.equal(running, 2);
  t.controller.setConcurrency(4);
  await t.clock.advance(1);
  assert.equal(running, 4, "two more workers took keys at once");
  t.controller.setConcurrency(1);
  for (const finish of waiting.splice(0)) finish();
  await t.clock.advance(1);
  assert.equal(running, 1, "only one worker takes a new key once lowered");
  for (const finish of waiting.splice(0)) finish();
  await t.clock.advance(1);
  assert.equal(running, 1);
  assert.equal(most, 4);
  assert.throws(() => t.controller.setConcurrency(0), /a whole number of at least 1 is needed, got 0/);
  for (const finish of waiting.splice(0)) finish();
  await t.clock.advance(1);
  assert.equal(t.outcomes.length, 6);
  // Workers idle in the queue when it is lowered leave too: three wait, two are retired, one key at a time runs.
  t.controller.setConcurrency(3);
  await t.clock.advance(1);
  t.controller.setConcurrency(1);
  await t.clock.advance(1);
  t.controller.enqueue("op", ["ns/7", "ns/8", "ns/9"].map((k) => requestOf("b", k)));
  await t.clock.advance(1);
  assert.equal(running, 1);
  for (let i = 0; i < 3; i++) {
    for (const finish of waiting.splice(0)) finish();
    await t.clock.advance(1);
  }
  t.stop.abort();
  await t.done;
  assert.equal(t.outcomes.length, 9);
});

Deno.test("Controller reconciles live keys before listed ones, and a listed key's retry waits behind live ones", async () => {
  const order: string[] = [];
  let failed = false;
  // Each reconcile takes 10 ms on the virtual clock; one worker.
  const t = setup(async (req) => {
    order.push(`${req.cluster}/${req.name}@${t.clock.now()}`);
    await t.clock.sleep(10);
    if (req.name === "l0" && req.cluster === "a" && !failed) {
      failed = true;
      throw new Error("transient");
    }
  }, { concurrency: 1 });
  t.controller.enqueue("op", ["ns/l0", "ns/l1", "ns/l2"].map((k) => requestOf("a", k)), "low");
  t.controller.enqueue("op", ["ns/l0"].map((k) => requestOf("b", k)), "low");
  t.controller.enqueue("op", ["ns/live"].map((k) => requestOf("b", k)));
  await t.clock.advance(22);
  t.controller.enqueue("op", ["ns/live"].map((k) => requestOf("a", k)));
  await t.clock.advance(1000);
  assert.deepEqual(order, [
    "a/l0@0", // taken at once: nothing else was queued yet; fails, its retry is due at 15 ms, at low priority
    "b/live@10", // live before the four low keys queued earlier
    "a/l1@20", // then the low lane, round-robin (a, then b)
    "a/live@30", // queued at 22 ms: ahead of b/l0
    "b/l0@40",
    "a/l2@50",
    "a/l0@60", // the retry went to the back of a's low lane
  ]);
  t.stop.abort();
  await t.done;
});

import assert from "node:assert/strict";
import { VirtualClock } from "../util/clock.ts";
import { InvalidKeyError } from "./key.ts";
import { ItemExponentialLimiter, type RateLimiter } from "./rate_limiter.ts";
import { FairWorkQueue, type QueueKey, type WorkQueueOptions } from "./work_queue.ts";

/** A queue key written as `cluster/operator/namespace/name` (test fixtures only; the queue never parses strings). */
function k(s: string): QueueKey {
  const [name, namespace, operator, ...cluster] = s.split("/").reverse();
  return { operator, request: { cluster: cluster.reverse().join("/"), namespace, name } };
}

/** A key written back as `cluster/operator/namespace/name`, for readable assertions. */
function s(key: QueueKey | undefined): string {
  return key ? `${key.request.cluster}/${key.operator}/${key.request.namespace}/${key.request.name}` : String(key);
}

function setup(options: WorkQueueOptions = {}) {
  const clock = new VirtualClock();
  const queue = new FairWorkQueue({ clock, ...options });
  return { clock, queue };
}

/** Hands out keys until the queue is empty, marking each done at once. */
function drain(queue: FairWorkQueue): QueueKey[] {
  const out: QueueKey[] = [];
  for (let key = queue.tryGet(); key !== undefined; key = queue.tryGet()) {
    out.push(key);
    queue.done(key);
  }
  return out;
}

Deno.test("WorkQueue.add() ignores a key that is already queued", async () => {
  const { queue } = setup();
  queue.add(k("prod/op/ns/a"));
  queue.add(k("prod/op/ns/b"));
  queue.add(k("prod/op/ns/a"));
  assert.deepEqual(queue.len(), 2);
  assert.deepEqual(await queue.get(), k("prod/op/ns/a"));
  assert.deepEqual(await queue.get(), k("prod/op/ns/b"));
  assert.deepEqual(queue.len(), 0);
});

Deno.test("FairWorkQueue never hands out a key that is being processed", async () => {
  const { queue } = setup();
  queue.add(k("prod/op/ns/a"));
  assert.deepEqual(await queue.get(), k("prod/op/ns/a"));
  queue.add(k("prod/op/ns/a"));
  assert.deepEqual(queue.len(), 0, "a key added while processing is not queued yet");
  assert.deepEqual(queue.tryGet(), undefined);
});

Deno.test("FairWorkQueue.add() of a key being processed queues it again after done()", async () => {
  const { queue } = setup();
  queue.add(k("prod/op/ns/a"));
  const key = await queue.get();
  queue.add(k("prod/op/ns/a"));
  queue.add(k("prod/op/ns/a"));
  queue.done(key!);
  assert.deepEqual(queue.len(), 1);
  assert.deepEqual(await queue.get(), k("prod/op/ns/a"));
  queue.done(k("prod/op/ns/a"));
  assert.deepEqual(queue.len(), 0, "it is queued once, however often it was added");
});

Deno.test("FairWorkQueue.done() does not queue a key that was not added again", async () => {
  const { queue } = setup();
  queue.add(k("prod/op/ns/a"));
  queue.done((await queue.get())!);
  queue.done(k("prod/op/ns/a"));
  queue.done(k("prod/op/ns/never-seen"));
  assert.deepEqual(queue.len(), 0);
  assert.deepEqual(queue.stats("prod"), {
    queued: 0,
    queuedLow: 0,
    processing: 0,
    delayed: 0,
    retrying: 0,
    oldestWaitingMs: 0,
  });
});

Deno.test("FairWorkQueue.get() waits until a key is added", async () => {
  const { queue } = setup();
  let got: QueueKey | string | undefined = "nothing yet";
  const pending = queue.get().then((k) => (got = k));
  await Promise.resolve();
  assert.deepEqual(got, "nothing yet");
  queue.add(k("dev/op/ns/a"));
  await pending;
  assert.deepEqual(got, k("dev/op/ns/a"));
  assert.deepEqual(queue.stats("dev").processing, 1);
});

Deno.test("FairWorkQueue.get() serves concurrent waiters first come, first served", async () => {
  const { queue } = setup();
  const order: string[] = [];
  const waiters = ["w1", "w2", "w3"].map((w) => queue.get().then((k) => order.push(`${w}=${s(k)}`)));
  queue.add(k("prod/op/ns/a"));
  queue.add(k("dev/op/ns/b"));
  queue.add(k("prod/op/ns/c"));
  await Promise.all(waiters);
  assert.deepEqual(order, ["w1=prod/op/ns/a", "w2=dev/op/ns/b", "w3=prod/op/ns/c"]);
});

Deno.test("FairWorkQueue.get() resolves undefined when its signal aborts, and the next waiter gets the key", async () => {
  const { queue } = setup();
  const ac = new AbortController();
  const first = queue.get(ac.signal);
  const second = queue.get();
  ac.abort();
  assert.deepEqual(await first, undefined);
  queue.add(k("prod/op/ns/a"));
  assert.deepEqual(await second, k("prod/op/ns/a"));
  assert.deepEqual(await queue.get(AbortSignal.abort()), undefined, "an aborted signal never takes a key");
});

Deno.test("FairWorkQueue.shutDown() resolves every waiting get() with undefined and ignores later adds", async () => {
  const { queue } = setup();
  const waiters = [queue.get(), queue.get(), queue.get(new AbortController().signal)];
  queue.shutDown();
  queue.shutDown();
  assert.deepEqual(await Promise.all(waiters), [undefined, undefined, undefined]);
  queue.add(k("prod/op/ns/a"));
  queue.addAfter(k("prod/op/ns/b"), 10);
  queue.addRateLimited(k("prod/op/ns/c"));
  assert.deepEqual(queue.len(), 0);
  assert.deepEqual(await queue.get(), undefined);
});

Deno.test("FairWorkQueue.get() resolves undefined after shutDown() even with keys still queued", async () => {
  const { queue } = setup();
  queue.add(k("prod/op/ns/a"));
  queue.shutDown();
  assert.deepEqual(await queue.get(), undefined);
  assert.deepEqual(queue.tryGet(), undefined);
});

Deno.test("FairWorkQueue.add() throws InvalidKeyError for a key without a cluster part", () => {
  const { queue } = setup();
  assert.throws(() => queue.add(k("op/ns/a")), InvalidKeyError);
  assert.throws(() => queue.add(k("/op/ns/a")), InvalidKeyError);
  assert.throws(
    () => queue.add({ operator: "op", request: { cluster: "prod", namespace: "n/s", name: "a" } }),
    InvalidKeyError,
  );
  assert.deepEqual(queue.len(), 0);
});

Deno.test("FairWorkQueue hands out the keys of one cluster in the order they were added", () => {
  const { queue } = setup();
  const keys = Array.from({ length: 50 }, (_, i) => k(`prod/op/ns/k${i}`));
  for (const k of keys) queue.add(k);
  assert.deepEqual(drain(queue), keys);
});

Deno.test("FairWorkQueue serves clusters round-robin", () => {
  const { queue } = setup();
  for (let i = 0; i < 3; i++) queue.add(k(`prod/op/ns/p${i}`));
  for (let i = 0; i < 2; i++) queue.add(k(`dev/op/ns/d${i}`));
  queue.add(k("staging/op/ns/s0"));
  assert.deepEqual(drain(queue), [
    k("prod/op/ns/p0"),
    k("dev/op/ns/d0"),
    k("staging/op/ns/s0"),
    k("prod/op/ns/p1"),
    k("dev/op/ns/d1"),
    k("prod/op/ns/p2"),
  ]);
});

Deno.test("FairWorkQueue hands out a new cluster's key within as many gets as there are active clusters", () => {
  const { queue } = setup();
  for (let i = 0; i < 3_000; i++) queue.add(k(`prod/op/ns/p${i}`));
  for (let i = 0; i < 1_000; i++) queue.add(k(`staging/op/ns/s${i}`));
  // Take some keys first, so the newcomer arrives in the middle of a round.
  for (let i = 0; i < 7; i++) queue.done(queue.tryGet()!);

  queue.add(k("dev/op/ns/newcomer"));
  const active = 3;
  const handedOut = Array.from({ length: active }, () => queue.tryGet());
  assert.ok(
    handedOut.map(s).includes("dev/op/ns/newcomer"),
    `newcomer not among the next ${active}: ${handedOut.map(s)}`,
  );

  // The same holds with a single busy cluster: the newcomer is at most the second key.
  const other = setup().queue;
  for (let i = 0; i < 3_000; i++) other.add(k(`prod/op/ns/p${i}`));
  other.tryGet();
  other.add(k("dev/op/ns/newcomer"));
  assert.ok([other.tryGet(), other.tryGet()].map(s).includes("dev/op/ns/newcomer"));
});

Deno.test("FairWorkQueue drains 100,000 keys across 3 clusters fairly and in order", () => {
  const { queue } = setup();
  const sizes: Record<string, number> = { prod: 70_000, staging: 20_000, dev: 10_000 };
  // Interleave the adds a little, as watch streams of several clusters would.
  for (let i = 0; i < 70_000; i++) {
    for (const [cluster, size] of Object.entries(sizes)) if (i < size) queue.add(k(`${cluster}/op/ns/k${i}`));
  }
  assert.deepEqual(queue.len(), 100_000);
  const out = drain(queue);
  assert.deepEqual(out.length, 100_000);
  assert.deepEqual(new Set(out.map(s)).size, 100_000, "no key handed out twice");

  // While all three have keys, each gets exactly one in every three.
  const count = (keys: QueueKey[]) => {
    const c: Record<string, number> = {};
    for (const k of keys) c[k.request.cluster] = (c[k.request.cluster] ?? 0) + 1;
    return c;
  };
  assert.deepEqual(count(out.slice(0, 30_000)), { prod: 10_000, staging: 10_000, dev: 10_000 });
  assert.deepEqual(count(out.slice(30_000, 50_000)), { prod: 10_000, staging: 10_000 });
  assert.deepEqual(count(out.slice(50_000)), { prod: 50_000 });
  // Per cluster, first in, first out.
  for (const [cluster, size] of Object.entries(sizes)) {
    const names = out.filter((k) => k.request.cluster === cluster).map((k) => k.request.name);
    assert.deepEqual(names, Array.from({ length: size }, (_, i) => `k${i}`));
  }
  assert.deepEqual(queue.len(), 0);
});

Deno.test("FairWorkQueue.addAfter() adds the key once the delay has passed", async () => {
  const { clock, queue } = setup();
  queue.addAfter(k("prod/op/ns/a"), 1_000);
  assert.deepEqual(queue.len(), 0);
  assert.deepEqual(queue.stats("prod").delayed, 1);
  const got = queue.get();
  await clock.advance(999);
  assert.deepEqual(queue.stats("prod").delayed, 1);
  await clock.advance(1);
  assert.deepEqual(await got, k("prod/op/ns/a"));
  assert.deepEqual(queue.stats("prod").delayed, 0);
  assert.deepEqual(clock.pending, 0);
});

Deno.test("FairWorkQueue.addAfter() keeps the earliest due time for a key", async () => {
  const { clock, queue } = setup();
  queue.addAfter(k("prod/op/ns/a"), 500);
  queue.addAfter(k("prod/op/ns/a"), 2_000); // later: ignored
  queue.addAfter(k("prod/op/ns/a"), 100); // earlier: wins
  await clock.advance(100);
  assert.deepEqual(queue.tryGet(), k("prod/op/ns/a"));
  queue.done(k("prod/op/ns/a"));
  await clock.advance(5_000);
  assert.deepEqual(queue.len(), 0, "the superseded due times do not add the key again");
  assert.deepEqual(clock.pending, 0);
});

Deno.test("FairWorkQueue.addAfter() adds keys in due order with one clock timer per cluster", async () => {
  const { clock, queue } = setup();
  for (let i = 0; i < 1_000; i++) queue.addAfter(k(`prod/op/ns/k${i}`), 1_000 - i);
  queue.addAfter(k("dev/op/ns/x"), 5);
  assert.deepEqual(clock.pending, 2);
  await clock.advance(1_000);
  const out = drain(queue);
  assert.deepEqual(out[0], k("prod/op/ns/k999"));
  assert.deepEqual(
    out.filter((k) => k.request.cluster === "prod"),
    Array.from({ length: 1_000 }, (_, i) => k(`prod/op/ns/k${999 - i}`)),
  );
  assert.deepEqual(clock.pending, 0);
});

Deno.test("FairWorkQueue.addAfter() with no delay adds at once and rejects a non-finite delay", () => {
  const { clock, queue } = setup();
  queue.addAfter(k("prod/op/ns/a"), 0);
  queue.addAfter(k("prod/op/ns/b"), -5);
  assert.deepEqual(queue.len(), 2);
  assert.deepEqual(clock.pending, 0);
  assert.throws(() => queue.addAfter(k("prod/op/ns/c"), NaN), /delay must be finite, got NaN ms/);
});

Deno.test("FairWorkQueue.addAfter() of a key that is processing queues it after done()", async () => {
  const { clock, queue } = setup();
  queue.add(k("prod/op/ns/a"));
  const key = queue.tryGet()!;
  queue.addAfter(key, 10);
  await clock.advance(10);
  assert.deepEqual(queue.len(), 0);
  queue.done(key);
  assert.deepEqual(queue.tryGet(), key);
});

Deno.test("FairWorkQueue.addRateLimited() backs off per key and forget() starts it over", async () => {
  const { clock, queue } = setup();
  const key = k("prod/op/ns/a");
  const dueAfter: number[] = [];
  for (let attempt = 0; attempt < 4; attempt++) {
    const start = clock.now();
    queue.addRateLimited(key);
    let handedOutAt = -1;
    const got = queue.get().then((k) => (handedOutAt = clock.now(), k));
    while (handedOutAt < 0) await clock.advance(1);
    assert.deepEqual(await got, key);
    dueAfter.push(handedOutAt - start);
    queue.done(key);
  }
  assert.deepEqual(dueAfter, [5, 10, 20, 40]);
  assert.deepEqual(queue.numRequeues(key), 4);
  assert.deepEqual(queue.stats("prod").retrying, 1);
  queue.forget(key);
  assert.deepEqual(queue.numRequeues(key), 0);
  assert.deepEqual(queue.stats("prod").retrying, 0);
});

Deno.test("FairWorkQueue uses the rate limiter given in its options", () => {
  const calls: string[] = [];
  const rateLimiter: RateLimiter = {
    when: (key) => (calls.push(`when ${s(key)}`), 0),
    forget: (key) => void calls.push(`forget ${s(key)}`),
    retries: () => 7,
  };
  const { queue } = setup({ rateLimiter });
  queue.addRateLimited(k("prod/op/ns/a"));
  assert.deepEqual(queue.len(), 1);
  assert.deepEqual(queue.numRequeues(k("prod/op/ns/a")), 7);
  queue.forget(k("prod/op/ns/a"));
  assert.deepEqual(calls, ["when prod/op/ns/a", "forget prod/op/ns/a"]);
});

Deno.test("FairWorkQueue.removeCluster() drops that cluster's keys, timers and limiter state only", async () => {
  const limiter = new ItemExponentialLimiter();
  const { clock, queue } = setup({ rateLimiter: limiter });
  for (let i = 0; i < 100; i++) queue.add(k(`prod/op/ns/q${i}`));
  for (let i = 0; i < 100; i++) queue.addAfter(k(`prod/op/ns/d${i}`), 1_000 + i);
  queue.addRateLimited(k("prod/op/ns/r"));
  queue.add(k("dev/op/ns/a"));
  queue.addAfter(k("dev/op/ns/b"), 2_000);
  queue.addRateLimited(k("dev/op/ns/r"));
  assert.deepEqual(clock.pending, 2, "one timer per cluster");

  queue.removeCluster("prod");
  assert.deepEqual(clock.pending, 1, "prod's timer is cancelled; dev's remains");
  assert.deepEqual(queue.lenFor("prod"), 0);
  assert.deepEqual(queue.len(), 1);
  assert.deepEqual(limiter.retries(k("prod/op/ns/r")), 0);
  assert.deepEqual(limiter.retries(k("dev/op/ns/r")), 1);
  assert.deepEqual(queue.stats("prod"), {
    queued: 0,
    queuedLow: 0,
    processing: 0,
    delayed: 0,
    retrying: 0,
    oldestWaitingMs: 0,
  });

  await clock.advance(3_000);
  assert.deepEqual(drain(queue).map(s).sort(), ["dev/op/ns/a", "dev/op/ns/b", "dev/op/ns/r"]);
  assert.deepEqual(clock.pending, 0);
  queue.removeCluster("dev");
  queue.removeCluster("unknown");
  assert.deepEqual(clock.pending, 0);
  assert.deepEqual(queue.stats("dev"), {
    queued: 0,
    queuedLow: 0,
    processing: 0,
    delayed: 0,
    retrying: 0,
    oldestWaitingMs: 0,
  });
});

Deno.test("FairWorkQueue.removeCluster() does not queue a processing key again on done()", async () => {
  const { queue } = setup();
  queue.add(k("prod/op/ns/a"));
  const key = (await queue.get())!;
  queue.add(key); // dirty while processing
  queue.removeCluster("prod");
  queue.done(key);
  assert.deepEqual(queue.len(), 0);
  assert.deepEqual(queue.tryGet(), undefined);
});

Deno.test("FairWorkQueue takes a cluster back afresh after removeCluster()", async () => {
  const { queue } = setup();
  queue.add(k("prod/op/ns/a"));
  queue.add(k("dev/op/ns/a"));
  const inFlight = (await queue.get())!; // prod/op/ns/a
  queue.removeCluster("prod");
  queue.add(k("prod/op/ns/b"));
  queue.add(inFlight); // waits for done(), as before removal
  assert.deepEqual(queue.lenFor("prod"), 1);
  queue.done(inFlight);
  assert.deepEqual(drain(queue), [k("dev/op/ns/a"), k("prod/op/ns/b"), k("prod/op/ns/a")]);
  assert.deepEqual(queue.stats("prod").processing, 0);
});

Deno.test("FairWorkQueue.shutDown() cancels every pending timer", async () => {
  const { clock, queue } = setup();
  queue.addAfter(k("prod/op/ns/a"), 1_000);
  queue.addAfter(k("dev/op/ns/a"), 2_000);
  queue.addRateLimited(k("staging/op/ns/a"));
  assert.deepEqual(clock.pending, 3);
  queue.shutDown();
  assert.deepEqual(clock.pending, 0);
  await clock.advance(10_000);
  assert.deepEqual(queue.len(), 0);
});

Deno.test("FairWorkQueue hooks report adds, hand-outs with their wait and retries with the key", async () => {
  const events: string[] = [];
  const { clock, queue } = setup({
    hooks: {
      added: (k) => events.push(`added ${s(k)}`),
      handedOut: (k, ms) => events.push(`handedOut ${s(k)} ${ms}`),
      retried: (k) => events.push(`retried ${s(k)}`),
    },
  });
  queue.add(k("prod/op/ns/a"));
  queue.add(k("prod/op/ns/a"));
  await clock.advance(250);
  const key = queue.tryGet()!;
  queue.addRateLimited(key);
  await clock.advance(5);
  queue.done(key);
  queue.add(k("dev/op/ns/b"));
  queue.removeCluster("dev");
  assert.deepEqual(events, [
    "added prod/op/ns/a",
    "handedOut prod/op/ns/a 250",
    "retried prod/op/ns/a",
    "added prod/op/ns/a",
    "added dev/op/ns/b",
  ]);
});

Deno.test("FairWorkQueue.oldestWaitingMs() and stats() report per-cluster numbers", async () => {
  const { clock, queue } = setup();
  queue.add(k("prod/op/ns/a"));
  await clock.advance(100);
  queue.add(k("prod/op/ns/b"));
  queue.addAfter(k("prod/op/ns/c"), 1_000);
  await clock.advance(50);
  assert.deepEqual(queue.oldestWaitingMs("prod"), 150);
  assert.deepEqual(queue.oldestWaitingMs("dev"), 0);
  queue.tryGet();
  assert.deepEqual(queue.stats("prod"), {
    queued: 1,
    queuedLow: 0,
    processing: 1,
    delayed: 1,
    retrying: 0,
    oldestWaitingMs: 50,
  });
  assert.deepEqual(queue.lenFor("prod"), 1);
  queue.shutDown();
});

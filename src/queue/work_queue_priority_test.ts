import assert from "node:assert/strict";
import { VirtualClock } from "../util/clock.ts";
import { ItemExponentialLimiter } from "./rate_limiter.ts";
import type { QueueKey } from "./key.ts";
import { FairWorkQueue, type QueuePriority, type WorkQueueOptions } from "./work_queue.ts";

function setup(options: WorkQueueOptions = {}) {
  const clock = new VirtualClock();
  const queue = new FairWorkQueue({ clock, ...options });
  return { clock, queue };
}

/** Hands out keys until the queue is empty, marking each done at once. */
function drain(queue: FairWorkQueue, max = Infinity): QueueKey[] {
  const out: QueueKey[] = [];
  for (let key = queue.tryGet(); key !== undefined; key = out.length < max ? queue.tryGet() : undefined) {
    out.push(key);
    queue.done(key);
    if (out.length >= max) break;
  }
  return out;
}

const k = (cluster: string, name: string): QueueKey => ({
  operator: "op",
  request: { cluster, namespace: "ns", name },
});
/** A key's parts as one string, for sets of keys compared by value. */
const id = (key: QueueKey) => `${key.request.cluster} ${key.operator} ${key.request.namespace} ${key.request.name}`;

Deno.test("FairWorkQueue hands out live keys before low keys queued earlier in the same cluster", () => {
  const { queue } = setup();
  for (let i = 0; i < 5; i++) queue.add(k("prod", `listed${i}`), "low");
  queue.add(k("prod", "live0"));
  queue.add(k("prod", "live1"), "live");
  assert.deepEqual(queue.len(), 7);
  assert.deepEqual(queue.stats("prod").queuedLow, 5);
  assert.deepEqual(drain(queue), [
    k("prod", "live0"),
    k("prod", "live1"),
    ...Array.from({ length: 5 }, (_, i) => k("prod", `listed${i}`)),
  ]);
});

Deno.test("FairWorkQueue: a cluster relisting 10,000 objects delays no live key, in its own or another cluster", () => {
  const { queue } = setup();
  for (let i = 0; i < 10_000; i++) queue.add(k("prod", `listed${i}`), "low");
  assert.deepEqual(drain(queue, 3), [k("prod", "listed0"), k("prod", "listed1"), k("prod", "listed2")]);
  queue.add(k("dev", "created"));
  queue.add(k("prod", "changed"));
  assert.deepEqual(drain(queue, 2), [k("dev", "created"), k("prod", "changed")], "both live keys come next");
  assert.deepEqual(drain(queue).length, 10_000 - 3, "every low key is still handed out, once");
});

Deno.test("FairWorkQueue serves the low lane round-robin across clusters", () => {
  const { queue } = setup();
  for (let i = 0; i < 1_000; i++) queue.add(k("prod", `p${i}`), "low");
  drain(queue, 10);
  queue.add(k("dev", "d0"), "low");
  queue.add(k("dev", "d1"), "low");
  queue.add(k("staging", "s0"), "low");
  // dev joined the round after prod, staging after dev: one key each per turn.
  assert.deepEqual(drain(queue, 6), [
    k("prod", "p10"),
    k("dev", "d0"),
    k("staging", "s0"),
    k("prod", "p11"),
    k("dev", "d1"),
    k("prod", "p12"),
  ]);
});

Deno.test("FairWorkQueue serves the live lane round-robin across clusters while low keys wait", () => {
  const { queue } = setup();
  for (const c of ["prod", "dev"]) for (let i = 0; i < 100; i++) queue.add(k(c, `low${i}`), "low");
  for (let i = 0; i < 3; i++) queue.add(k("prod", `live${i}`));
  queue.add(k("dev", "live0"));
  assert.deepEqual(drain(queue, 5), [
    k("prod", "live0"),
    k("dev", "live0"),
    k("prod", "live1"),
    k("prod", "live2"),
    k("prod", "low0"),
  ]);
});

Deno.test("FairWorkQueue.add() live promotes a key queued low: handed out next, once, with its first add time", async () => {
  const waits: [QueueKey, number][] = [];
  let adds = 0;
  const { clock, queue } = setup({
    hooks: { added: () => void adds++, handedOut: (key, ms) => void waits.push([key, ms]) },
  });
  for (let i = 0; i < 5; i++) queue.add(k("prod", `o${i}`), "low");
  await clock.advance(40);
  queue.add(k("prod", "o3"));
  queue.add(k("prod", "o3"), "low");
  assert.deepEqual(queue.len(), 5, "a promotion is no second add");
  assert.deepEqual(queue.stats("prod").queuedLow, 4);
  assert.deepEqual(adds, 5);
  assert.deepEqual(drain(queue), [k("prod", "o3"), k("prod", "o0"), k("prod", "o1"), k("prod", "o2"), k("prod", "o4")]);
  assert.deepEqual(waits[0], [k("prod", "o3"), 40], "its wait counts from its first add");
  assert.deepEqual(queue.len(), 0);
});

Deno.test("FairWorkQueue.add() low never demotes a key queued live", () => {
  const { queue } = setup();
  queue.add(k("prod", "low"), "low");
  queue.add(k("prod", "a"));
  queue.add(k("prod", "a"), "low");
  assert.deepEqual(queue.stats("prod").queuedLow, 1);
  assert.deepEqual(drain(queue), [k("prod", "a"), k("prod", "low")]);
});

Deno.test("FairWorkQueue: a live add of a processing key handed out low queues it live after done()", () => {
  const { queue } = setup();
  queue.add(k("prod", "a"), "low");
  queue.add(k("prod", "b"), "low");
  const a = queue.tryGet()!;
  assert.deepEqual(queue.priorityOf(a), "low");
  queue.add(a, "low");
  queue.add(a);
  assert.deepEqual(queue.tryGet(), k("prod", "b"), "never handed out twice at once");
  queue.add(k("prod", "c"), "low");
  queue.done(a);
  assert.deepEqual(drain(queue), [a, k("prod", "c")], "a jumps ahead of the low lane");
  queue.done(k("prod", "b"));
  assert.deepEqual(queue.len(), 0);
});

Deno.test("FairWorkQueue: many promotions never grow the queue or lose a key", () => {
  const { queue } = setup();
  const handed = new Set<string>();
  for (let round = 0; round < 50; round++) {
    for (let i = 0; i < 100; i++) queue.add(k("prod", `o${i}`), "low");
    for (let i = 0; i < 100; i += 2) queue.add(k("prod", `o${i}`));
    assert.deepEqual(queue.len(), 100);
    // Take the 50 promoted ones; the other 50 stay low and are re-added (no-ops) next round.
    for (const key of drain(queue, 50)) handed.add(id(key));
  }
  assert.deepEqual(queue.len(), 50);
  const rest = drain(queue);
  assert.deepEqual(rest.length, 50);
  assert.ok(rest.every((key) => Number(key.request.name.slice(1)) % 2 === 1), "the low ones come out last");
  assert.deepEqual(handed.size, 50);
});

Deno.test("FairWorkQueue requeues keep the priority the key was handed out with; the rate limits are unchanged", async () => {
  const { clock, queue } = setup({ rateLimiter: new ItemExponentialLimiter({ baseMs: 5 }) });
  queue.add(k("prod", "listed"), "low");
  const key = queue.tryGet()!;
  queue.addRateLimited(key);
  queue.done(key);
  await clock.advance(4);
  assert.deepEqual(queue.len(), 0, "5 ms backoff, as before");
  await clock.advance(1);
  assert.deepEqual(queue.stats("prod").queuedLow, 1, "the retry stays low");
  queue.add(k("prod", "live"));
  assert.deepEqual(drain(queue), [k("prod", "live"), key]);
  queue.forget(key);

  queue.add(k("prod", "r"), "low");
  const r = queue.tryGet()!;
  queue.addAfter(r, 10, "live");
  queue.done(r);
  await clock.advance(10);
  assert.deepEqual(queue.stats("prod").queuedLow, 0, "an explicit priority wins");
  assert.deepEqual(queue.len(), 1);
  drain(queue);

  queue.addAfter(k("prod", "x"), 100, "low");
  queue.addAfter(k("prod", "x"), 200);
  await clock.advance(100);
  assert.deepEqual(queue.stats("prod"), {
    queued: 1,
    queuedLow: 0,
    processing: 0,
    delayed: 0,
    retrying: 0,
    oldestWaitingMs: 0,
  }, "the earlier due time and the higher priority win");
  assert.deepEqual(queue.priorityOf(k("prod", "x")), undefined, "not processing");
});

Deno.test("FairWorkQueue.removeCluster() drops low and promoted keys of that cluster only", () => {
  const { queue } = setup();
  for (let i = 0; i < 10; i++) queue.add(k("prod", `o${i}`), "low");
  queue.add(k("prod", "o4"));
  queue.add(k("dev", "d"), "low");
  queue.removeCluster("prod");
  assert.deepEqual(queue.len(), 1);
  assert.deepEqual(drain(queue), [k("dev", "d")]);
  queue.add(k("prod", "o4"), "low");
  assert.deepEqual(drain(queue), [k("prod", "o4")], "a key of the removed cluster can be added afresh");
});

Deno.test("FairWorkQueue.oldestWaitingMs() counts the low lane's head too", async () => {
  const { clock, queue } = setup();
  queue.add(k("prod", "listed"), "low");
  await clock.advance(30);
  queue.add(k("prod", "live"));
  await clock.advance(5);
  assert.deepEqual(queue.oldestWaitingMs("prod"), 35);
  assert.deepEqual(queue.tryGet(), k("prod", "live"));
  assert.deepEqual(queue.oldestWaitingMs("prod"), 35);
});

Deno.test("FairWorkQueue under random adds, promotions and workers: no key twice at once, none lost", async () => {
  // A seeded generator, so a failure can be replayed.
  let seed = 42;
  const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  const { clock, queue } = setup({ rateLimiter: new ItemExponentialLimiter({ baseMs: 5, maxMs: 50 }) });
  const clusters = ["prod", "staging", "dev"];
  const processing = new Set<string>();
  /** Keys added since they were last handed out: each must be handed out again. */
  const owed = new Set<string>();
  const held: QueueKey[] = [];
  for (let step = 0; step < 20_000; step++) {
    const r = random();
    if (r < 0.45) {
      const key = k(clusters[Math.floor(random() * 3)], `o${Math.floor(random() * 300)}`);
      const priority: QueuePriority = random() < 0.7 ? "low" : "live";
      queue.add(key, priority);
      owed.add(id(key));
    } else if (r < 0.75) {
      const key = queue.tryGet();
      if (key === undefined) continue;
      assert.ok(!processing.has(id(key)), `${id(key)} handed out twice at once`);
      processing.add(id(key));
      owed.delete(id(key));
      held.push(key);
    } else if (held.length) {
      const key = held.splice(Math.floor(random() * held.length), 1)[0];
      if (random() < 0.1) {
        queue.addRateLimited(key);
        owed.add(id(key));
      } else queue.forget(key);
      processing.delete(id(key));
      queue.done(key);
    }
    if (step % 1000 === 0) await clock.advance(20);
  }
  for (const key of held) {
    processing.delete(id(key));
    queue.done(key);
  }
  await clock.advance(1_000);
  for (let key = queue.tryGet(); key !== undefined; key = queue.tryGet()) {
    owed.delete(id(key));
    queue.done(key);
  }
  assert.deepEqual([...owed], [], "every key added is handed out after its last add");
  assert.deepEqual(queue.len(), 0);
});

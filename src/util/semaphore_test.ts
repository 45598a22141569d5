// Tests of the counting semaphore that bounds concurrent cluster pre-flights.

import assert from "node:assert/strict";
import { Semaphore } from "./semaphore.ts";

Deno.test("Semaphore lets N callers hold a permit and queues the rest in order", async () => {
  const s = new Semaphore(2);
  const a = await s.acquire();
  const b = await s.acquire();
  const order: string[] = [];
  const c = s.acquire().then((r) => (order.push("c"), r));
  const d = s.acquire().then((r) => (order.push("d"), r));
  await Promise.resolve();
  assert.deepEqual([s.held, s.waiting, order], [2, 2, []]);
  a();
  a(); // a second call frees nothing more
  const releaseC = await c;
  assert.deepEqual([s.held, s.waiting, order], [2, 1, ["c"]]);
  b();
  const releaseD = await d;
  assert.deepEqual(order, ["c", "d"]);
  releaseC();
  releaseD();
  assert.deepEqual([s.held, s.waiting], [0, 0]);
});

Deno.test("Semaphore.acquire() rejects with the signal's reason and leaves the queue when its caller gives up", async () => {
  const s = new Semaphore(1);
  const release = await s.acquire();
  const ac = new AbortController();
  const waiting = s.acquire(ac.signal);
  ac.abort(new Error("stopped"));
  await assert.rejects(waiting, /stopped/);
  assert.equal(s.waiting, 0);
  release();
  assert.equal(s.held, 0, "the aborted waiter never got the permit");
  await assert.rejects(s.acquire(AbortSignal.abort(new Error("already"))), /already/);
});

Deno.test("Semaphore refuses fewer than one permit", () => {
  assert.throws(() => new Semaphore(0), RangeError);
});

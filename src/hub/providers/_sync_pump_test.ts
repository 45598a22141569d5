// Unit tests of the registry's sync engine: enabling, the parallel bound, one sync per name, idle and stop (pure).
import assert from "node:assert/strict";
import { flushMicrotasks } from "../../util/mod.ts";
import { SyncPump } from "./_sync_pump.ts";

/** A sync whose runs wait until the test releases them, recording each start. */
function gatedSync() {
  const started: string[] = [];
  const pending = new Map<string, (() => void)[]>();
  let running = 0;
  let maxRunning = 0;
  const sync = (name: string) => {
    started.push(name);
    running++;
    maxRunning = Math.max(maxRunning, running);
    return new Promise<void>((resolve) => {
      const list = pending.get(name) ?? [];
      list.push(() => {
        running--;
        resolve();
      });
      pending.set(name, list);
    });
  };
  const release = async (name: string) => {
    const list = pending.get(name);
    assert.ok(list?.length, `no sync of ${name} is waiting`);
    list.shift()!();
    await flushMicrotasks();
  };
  return { sync, started, release, maxRunning: () => maxRunning };
}

const onError = () => {};

Deno.test("SyncPump syncs nothing before enable(), then every name marked so far", async () => {
  const g = gatedSync();
  const pump = new SyncPump(g.sync, { concurrency: 8, onError });
  pump.mark("a");
  pump.mark("b");
  await flushMicrotasks();
  assert.deepEqual(g.started, []);
  pump.enable();
  assert.deepEqual(g.started, ["a", "b"]);
});

Deno.test("SyncPump runs at most `concurrency` syncs at once and starts the next as one ends", async () => {
  const g = gatedSync();
  const pump = new SyncPump(g.sync, { concurrency: 2, onError });
  pump.enable();
  for (const n of ["a", "b", "c", "d"]) pump.mark(n);
  assert.deepEqual(g.started, ["a", "b"]);
  await g.release("a");
  assert.deepEqual(g.started, ["a", "b", "c"]);
  await g.release("b");
  await g.release("c");
  await g.release("d");
  assert.equal(g.maxRunning(), 2);
});

Deno.test("SyncPump never runs two syncs of one name: a mark during a sync runs it once more afterwards", async () => {
  const g = gatedSync();
  const pump = new SyncPump(g.sync, { concurrency: 8, onError });
  pump.enable();
  pump.mark("a");
  pump.mark("a");
  pump.mark("a");
  assert.deepEqual(g.started, ["a"]);
  await g.release("a");
  assert.deepEqual(g.started, ["a", "a"], "the marks made while it ran coalesce into one more sync");
  await g.release("a");
  assert.deepEqual(g.started, ["a", "a"]);
});

Deno.test("SyncPump.idle() resolves once nothing is marked or running", async () => {
  const g = gatedSync();
  const pump = new SyncPump(g.sync, { concurrency: 8, onError });
  await pump.idle(); // nothing to do: resolves at once
  pump.enable();
  pump.mark("a");
  let idle = false;
  pump.idle().then(() => idle = true);
  await flushMicrotasks();
  assert.equal(idle, false);
  await g.release("a");
  assert.equal(idle, true);
});

Deno.test("SyncPump reports a sync that throws and goes on with the other names", async () => {
  const errors: string[] = [];
  const synced: string[] = [];
  const pump = new SyncPump((name) => {
    if (name === "bad") return Promise.reject(new Error("boom"));
    synced.push(name);
    return Promise.resolve();
  }, { concurrency: 1, onError: (name, err) => errors.push(`${name}: ${(err as Error).message}`) });
  pump.enable();
  pump.mark("bad");
  pump.mark("good");
  await pump.idle();
  assert.deepEqual(errors, ["bad: boom"]);
  assert.deepEqual(synced, ["good"]);
});

Deno.test("SyncPump.stop() forgets the marks, starts nothing more, and resolves once the running syncs ended", async () => {
  const g = gatedSync();
  const pump = new SyncPump(g.sync, { concurrency: 1, onError });
  pump.enable();
  pump.mark("a");
  pump.mark("b");
  let stopped = false;
  const stopping = pump.stop().then(() => stopped = true);
  assert.equal(pump.stopped, true);
  await flushMicrotasks();
  assert.equal(stopped, false, "a sync still runs");
  await g.release("a");
  await stopping;
  pump.mark("c");
  assert.deepEqual(g.started, ["a"], "neither the forgotten mark nor a later one starts");
});

// Unit tests for background tasks on virtual time: one per key, stopped with a grace period, refused once closed.
import assert from "node:assert/strict";
import { Logger, VirtualClock } from "../util/mod.ts";
import { TaskSet } from "./background_tasks.ts";
import type { ReconcileScope } from "./reconciler.ts";

function setup(graceMs = 1000) {
  const clock = new VirtualClock();
  const lines: string[] = [];
  const logger = new Logger({ level: "debug", format: "json", write: (l: string) => lines.push(l) });
  const tasks = new TaskSet({
    scopeFor: (key, signal) => ({ signal, reconcileId: key } as unknown as ReconcileScope),
    graceMs,
    clock,
    logger,
  });
  return { clock, lines, tasks };
}

/** A task that runs until its signal aborts, then takes `exitMs` to end; records what it saw. */
function worker(clock: VirtualClock, log: string[], name: string, exitMs = 0) {
  return async (scope: ReconcileScope) => {
    log.push(`start ${name} ${scope.reconcileId}`);
    await new Promise<void>((r) => scope.signal.addEventListener("abort", () => r(), { once: true }));
    await clock.sleep(exitMs);
    log.push(`end ${name}`);
  };
}

Deno.test("TaskSet.start() runs one task per key and refuses a second while the first runs", async () => {
  const { clock, tasks } = setup();
  const log: string[] = [];
  assert.equal(tasks.start("ns/a", worker(clock, log, "one")), true);
  assert.equal(tasks.start("ns/a", worker(clock, log, "two")), false);
  await clock.advance(0);
  assert.deepEqual(log, ["start one ns/a"]);
  assert.equal(tasks.has("ns/a"), true);
  const stopping = tasks.stop("ns/a");
  await clock.advance(0);
  await stopping;
  assert.deepEqual(log, ["start one ns/a", "end one"]);
  assert.equal(tasks.has("ns/a"), false);
  assert.equal(tasks.start("ns/a", worker(clock, log, "three")), true, "a new one once the first ended");
});

Deno.test("TaskSet.stop() waits for the task up to its grace period, then logs it and stops waiting", async () => {
  const { clock, lines, tasks } = setup(1000);
  const log: string[] = [];
  tasks.start("ns/slow", worker(clock, log, "slow", 5000));
  tasks.start("ns/quick", worker(clock, log, "quick", 200), { graceMs: 300 });
  await clock.advance(0);
  let stopped = false;
  const stopping = tasks.close().then(() => stopped = true);
  await clock.advance(999);
  assert.equal(stopped, false, "within the grace period");
  assert.ok(log.includes("end quick"));
  await clock.advance(1);
  await stopping;
  assert.equal(stopped, true);
  assert.ok(lines.some((l) => l.includes("did not stop within its grace period") && l.includes("ns/slow")));
  assert.ok(!lines.some((l) => l.includes("did not stop") && l.includes("ns/quick")));
  assert.equal(tasks.has("ns/slow"), true, "it keeps its key until it really ends");
  await clock.advance(4000);
  assert.equal(tasks.has("ns/slow"), false);
});

Deno.test("TaskSet.close() refuses new tasks until open(), and a failing task is logged, not thrown", async () => {
  const { clock, lines, tasks } = setup();
  await tasks.close();
  assert.equal(tasks.start("ns/a", () => Promise.resolve()), false, "reconciling stopped: nothing starts");
  tasks.open();
  assert.equal(tasks.start("ns/a", () => Promise.reject(new Error("boom"))), true);
  await clock.advance(0);
  assert.equal(tasks.has("ns/a"), false);
  assert.ok(lines.some((l) => l.includes("background task failed") && l.includes("boom")));
  await tasks.stop("ns/none");
});

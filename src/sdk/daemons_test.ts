// Unit tests for daemons on virtual time: one per object, restarted with backoff, stopped with a grace period.
import assert from "node:assert/strict";
import { type ReconcileScope, type StoredObject, TaskSet } from "../runtime/mod.ts";
import { Logger, VirtualClock } from "../util/mod.ts";
import { Daemons, type DaemonSpec, resolveDaemons } from "./daemons.ts";
import { defineHandlers, type HandlerContext } from "./handlers.ts";
import { OperatorDefinitionError } from "./define_operator.ts";

const request = { cluster: "prod", namespace: "ns", name: "a" };

/** A cluster's cache of one object, its background tasks and the Daemons under test, on virtual time. */
function setup(specs: DaemonSpec | DaemonSpec[]) {
  const clock = new VirtualClock();
  const lines: string[] = [];
  const logger = new Logger({ level: "debug", format: "json", write: (l: string) => lines.push(l) });
  let object: StoredObject | undefined = { metadata: { name: "a", namespace: "ns", uid: "u1" }, spec: {} };
  const scopeFor = (signal: AbortSignal): ReconcileScope =>
    ({
      client: { cached: () => object },
      signal,
      logger,
      background: tasks,
      reconcileId: "r",
    }) as unknown as ReconcileScope;
  const tasks: TaskSet = new TaskSet({ scopeFor: (_k, s) => scopeFor(s), clock, logger });
  const daemons = new Daemons(
    resolveDaemons(specs),
    (obj, _r, scope) => ({ body: obj, name: obj.metadata.name, signal: scope.signal }) as unknown as HandlerContext,
    { clock },
  );
  const reconcile = () => daemons.reconcile(request, scopeFor(new AbortController().signal));
  return {
    clock,
    lines,
    tasks,
    daemons,
    reconcile,
    set: (o: StoredObject | undefined) => object = o,
    get object() {
      return object!;
    },
  };
}

Deno.test("A daemon runs once per object, however often the object is reconciled, until its signal aborts", async () => {
  const runs: string[] = [];
  const t = setup({
    id: "watch",
    fn: async ({ sleep, name }) => {
      runs.push(`start ${name}`);
      while (await sleep(100)) runs.push("tick");
      runs.push("stopped");
    },
  });
  assert.equal(t.daemons.wanted(t.object), true);
  await t.reconcile();
  await t.reconcile();
  assert.equal(t.daemons.wanted(t.object), false, "one runs: nothing to do");
  await t.clock.advance(250);
  assert.deepEqual(runs, ["start a", "tick", "tick"]);
  const closing = t.tasks.close(); // e.g. a shard handoff: the cluster's tasks stop
  await t.clock.advance(0);
  await closing;
  assert.deepEqual(runs.slice(-1), ["stopped"]);
  assert.equal(t.daemons.wanted(t.object), true, "wanted again once reconciling resumes");
  await t.reconcile();
  assert.equal(t.tasks.size, 0, "closed: a reconcile still running starts nothing");
});

Deno.test("A daemon that returns is run again after its backoff; one that throws backs off doubling; { restart: false } ends it", async () => {
  const starts: number[] = [];
  let mode: "return" | "throw" | "done" = "return";
  const t = setup({
    fn: function worker() {
      starts.push(t.clock.now());
      if (mode === "throw") throw new Error("flaky");
      if (mode === "done") return { restart: false };
    },
    backoffMs: 100,
    maxBackoffMs: 350,
  });
  await t.reconcile();
  await t.clock.advance(250);
  assert.deepEqual(starts, [0, 100, 200]);
  mode = "throw";
  await t.clock.advance(1200);
  // Failures in a row wait 100, 200, 350 (capped), 350, ...
  assert.deepEqual(starts.slice(3), [300, 400, 600, 950, 1300]);
  assert.ok(t.lines.some((l) => l.includes("daemon failed") && l.includes("flaky")));
  mode = "done";
  await t.clock.advance(400);
  const count = starts.length;
  assert.equal(t.tasks.size, 0, "finished for good");
  assert.equal(t.daemons.wanted(t.object), false, "not started again for this object");
  await t.reconcile();
  await t.clock.advance(1000);
  assert.equal(starts.length, count);
});

Deno.test("An object being deleted has its daemon stopped before reconcile settles, within the grace period", async () => {
  let stoppedAt = -1;
  const t = setup({
    fn: async ({ signal }) => {
      await new Promise((r) => signal.addEventListener("abort", r, { once: true }));
      await t.clock.sleep(300); // cleanup takes 300 ms, inside the 1000 ms grace
      stoppedAt = t.clock.now();
    },
    graceMs: 1000,
  });
  await t.reconcile();
  await t.clock.advance(500);
  t.set({ ...t.object, metadata: { ...t.object.metadata, deletionTimestamp: "2026-01-01T00:00:00Z" } });
  assert.equal(t.daemons.wanted(t.object), true, "the pre-check queues it, so the daemon is told");
  let settled = false;
  const reconciling = t.reconcile().then(() => settled = true);
  await t.clock.advance(299);
  assert.equal(settled, false, "delete handlers wait for the daemon");
  await t.clock.advance(1);
  await reconciling;
  assert.equal(stoppedAt, 800);
  assert.equal(t.daemons.wanted(t.object), false);
});

Deno.test("A daemon that ignores its signal is waited for its grace period only, then logged", async () => {
  const t = setup({ fn: () => t.clock.sleep(60_000), graceMs: 2000 });
  await t.reconcile();
  t.set(undefined); // gone
  let settled = false;
  const reconciling = t.reconcile().then(() => settled = true);
  await t.clock.advance(1999);
  assert.equal(settled, false);
  await t.clock.advance(1);
  await reconciling;
  assert.ok(t.lines.some((l) => l.includes("did not stop within its grace period")));
});

Deno.test("resolveDaemons() settles ids and refuses a non-function, a negative duration and duplicate ids", () => {
  assert.deepEqual(resolveDaemons({ fn: function probe() {} }).map((d) => [d.id, d.graceMs, d.backoffMs]), [[
    "probe",
    5000,
    1000,
  ]]);
  assert.throws(() => resolveDaemons({ fn: 1 as never }), OperatorDefinitionError);
  assert.throws(() => resolveDaemons({ fn: () => {}, graceMs: -1 }), /graceMs must be a number/);
  assert.throws(() => resolveDaemons([{ id: "x", fn: () => {} }, { id: "x", fn: () => {} }]), /share the id "x"/);
});

Deno.test("defineHandlers() wires daemons, indexes and timers to the cluster's background tasks: a handoff stops them, and they start again when it comes back", async () => {
  const clock = new VirtualClock();
  const logger = new Logger({ level: "error", write: () => {} });
  const object: StoredObject = {
    metadata: { name: "a", namespace: "ns", uid: "u1" },
    spec: { team: "t" },
    status: { handlers: { create: { c: { done: true } } } },
  };
  let daemonRuns = 0;
  const seen: unknown[] = [];
  const op = defineHandlers({
    name: "x",
    resource: { group: "demo.operator", version: "v1", kind: "Uuid", plural: "uuid" },
    create: function c() {},
    indexes: { byTeam: (o) => ({ [String((o.spec as { team: string }).team)]: o.metadata.name }) },
    timers: { intervalMs: 1000, fn: ({ indexes }) => void seen.push(indexes.byTeam.get("t")) },
    daemons: { fn: async ({ sleep }) => void (daemonRuns++, await sleep(1e9)) },
  });
  const tasks: TaskSet = new TaskSet({ scopeFor: (_k, signal) => scope(signal), clock, logger });
  const scope = (signal: AbortSignal) =>
    ({
      client: { cached: () => object },
      events: { record: () => Promise.resolve() },
      cluster: () => undefined,
      clusters: () => ["prod"],
      signal,
      logger,
      background: tasks,
      reconcileId: "r",
    }) as unknown as ReconcileScope;
  op.cacheObserver!.changed({ cluster: "prod", namespace: "ns", name: "a" }, object);
  assert.equal(op.needsReconcile!(object), true, "its daemon and timers are due");
  await op.reconciler.reconcile(request, scope(new AbortController().signal));
  assert.deepEqual(seen, [["a"]], "the timer read the index");
  assert.equal(daemonRuns, 1);
  assert.equal(op.needsReconcile!(object), false, "daemon and timers running: nothing due");
  // The cluster is handed to another replica: its background tasks close.
  const closing = tasks.close();
  await clock.advance(0);
  await closing;
  op.cacheObserver!.forget("prod");
  assert.equal(op.needsReconcile!(object), true, "both are due again when this replica reconciles the cluster again");
  tasks.open();
  op.cacheObserver!.changed({ cluster: "prod", namespace: "ns", name: "a" }, object);
  await op.reconciler.reconcile(request, scope(new AbortController().signal));
  assert.equal(daemonRuns, 2);
  assert.deepEqual(seen, [["a"], ["a"]], "the timer fired again at once");
  await tasks.close().then(() => clock.advance(0));
});

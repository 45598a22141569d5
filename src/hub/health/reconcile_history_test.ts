// Unit tests of ReconcileHistory on virtual time: rates, the 10-minute bound, resets and forgotten clusters.
import assert from "node:assert/strict";
import * as prom from "../../util/prometheus.ts";
import { VirtualClock } from "../../util/mod.ts";
import { CounterSeries } from "./metric_series.ts";
import { ReconcileHistory, reconcileTotals } from "./reconcile_history.ts";

Deno.test("ReconcileHistory turns counter samples into rates per second, oldest first", async () => {
  const clock = new VirtualClock();
  let totals = new Map([["prod", 0], ["dev", 100]]);
  const h = new ReconcileHistory({ read: () => Promise.resolve(totals), clock, stepMs: 5_000 });
  await h.sample();
  assert.deepEqual(h.snapshot(), { stepSeconds: 5, clusters: { prod: [], dev: [] } });
  await clock.advance(5_000);
  totals = new Map([["prod", 50], ["dev", 100]]);
  await h.sample();
  await clock.advance(5_000);
  totals = new Map([["prod", 60], ["dev", 7]]);
  await h.sample();
  assert.deepEqual(h.snapshot().clusters, { prod: [10, 2], dev: [0, 1.4] }, "a counter that went down restarts at 0");
});

Deno.test("ReconcileHistory keeps at most the last 10 minutes and forgets clusters that are gone", async () => {
  const clock = new VirtualClock();
  let n = 0;
  let clusters = ["prod", "staging"];
  const h = new ReconcileHistory({
    read: () => Promise.resolve(new Map(clusters.map((c) => [c, n]))),
    clock,
    stepMs: 5_000,
    windowMs: 600_000,
  });
  const stop = new AbortController();
  const running = h.start(stop.signal);
  for (let i = 0; i < 300; i++) {
    n += 5 * (i % 4); // 0, 1, 2, 3 per second in turn
    await clock.advance(5_000);
  }
  const prod = h.snapshot().clusters.prod;
  assert.equal(prod.length, 120, "10 minutes of 5-second steps");
  assert.deepEqual(prod.slice(-4), [0, 1, 2, 3], "the newest rates last");
  assert.deepEqual(prod.slice(0, 4), [0, 1, 2, 3], "the oldest kept is 10 minutes back");
  clusters = ["prod"];
  await clock.advance(5_000);
  assert.deepEqual(Object.keys(h.snapshot().clusters), ["prod"]);
  stop.abort();
  await running;
});

Deno.test("ReconcileHistory: a cluster idle for more than the window, then busy, reads zeros then its rate", async () => {
  const clock = new VirtualClock();
  let n = 0;
  const h = new ReconcileHistory({
    read: () => Promise.resolve(new Map([["idle", n]])),
    clock,
    stepMs: 5_000,
    windowMs: 20_000,
  });
  await h.sample();
  for (let i = 0; i < 6; i++) {
    await clock.advance(5_000);
    await h.sample();
  }
  assert.deepEqual(h.snapshot().clusters.idle, [0, 0, 0, 0], "idle steps read 0, at most the window's 4");
  n = 10;
  await clock.advance(5_000);
  await h.sample();
  await clock.advance(5_000);
  await h.sample();
  assert.deepEqual(h.snapshot().clusters.idle, [0, 0, 2, 0], "the busy step where it happened, in a full ring");
});

Deno.test("reconcileTotals() sums controller_runtime_reconcile_total per cluster and lists idle clusters at 0", async () => {
  const registry = new prom.MetricRegistry();
  const total = new CounterSeries(registry, "controller_runtime_reconcile_total", "help", [
    "controller",
    "cluster",
    "result",
  ]);
  total.inc("uuid", "prod", "success");
  total.inc("uuid", "prod", "error");
  total.inc("mirror", "prod", "success");
  total.inc("uuid", "gone", "success");
  assert.deepEqual(await reconcileTotals(registry, ["prod", "down"]), new Map([["prod", 3], ["down", 0]]));
  assert.deepEqual(await reconcileTotals(new prom.MetricRegistry(), ["a"]), new Map([["a", 0]]));
  assert.deepEqual(
    await reconcileTotals(registry),
    new Map([["prod", 3], ["gone", 1]]),
    "without names: those counted",
  );
});

Deno.test("reconcileTotals() reads the hub's counter without a scrape: folding clusters (which reads every cluster's health) is never asked", async () => {
  const registry = new prom.MetricRegistry();
  const total = new CounterSeries(registry, "controller_runtime_reconcile_total", "help", ["cluster", "result"]);
  let healthReads = 0;
  total.foldClusters(() => {
    healthReads++;
    return (c) => c === "prod";
  });
  total.inc("prod", "success");
  total.inc("stranger", "success");
  assert.deepEqual(await reconcileTotals(registry), new Map([["prod", 1], ["stranger", 1]]));
  assert.equal(healthReads, 0, "no health read to sample the totals");
  assert.match(await registry.metrics(), /cluster=""/, "a scrape still folds the stranger's series");
  assert.equal(healthReads, 1);
});

Deno.test("ReconcileHistory with clusters() keeps a flat line for a cluster read() does not name, and only those", async () => {
  const clock = new VirtualClock();
  let names = ["prod", "idle"];
  let totals = new Map([["prod", 0], ["elsewhere", 9]]);
  const h = new ReconcileHistory({ read: () => Promise.resolve(totals), clusters: () => names, clock, stepMs: 5_000 });
  await h.sample();
  await clock.advance(5_000);
  totals = new Map([["prod", 25], ["elsewhere", 99]]);
  await h.sample();
  assert.deepEqual(h.snapshot().clusters, { prod: [5], idle: [0] });
  names = ["idle"];
  await clock.advance(5_000);
  await h.sample();
  assert.deepEqual(h.snapshot().clusters, { idle: [0, 0] }, "a cluster no longer named is forgotten");
});

// Unit tests of the hub-wide verdict: status, readiness and the controller's wedge, from cluster entries (pure).
import assert from "node:assert/strict";
import type { ClusterHealth } from "./cluster_health.ts";
import { notEngagedHealth } from "./hub_health.ts";
import { type ControllerProgress, rollUpHealth } from "./_health_rollup.ts";

function watching(over: Partial<ClusterHealth> = {}): ClusterHealth {
  return { ...notEngagedHealth([], null), state: "watching", synced: true, ...over };
}

const IDLE: ControllerProgress = { inFlight: 0, queued: 0, idleForMs: 0, reconcileTimeoutMs: 30_000, running: true };

Deno.test("rollUpHealth() is ok and ready when every cluster watches and synced, with no notReady field", () => {
  const h = rollUpHealth({ prod: watching(), dev: watching() }, IDLE);
  assert.equal(h.status, "ok");
  assert.equal(h.ready, true);
  assert.equal("notReady" in h, false);
  assert.deepEqual(h.controller, { inFlight: 0, queued: 0, wedged: false });
  assert.deepEqual(Object.keys(h), ["status", "ready", "clusters", "controller"]);
});

Deno.test("rollUpHealth() is degraded and not ready while a cluster is not watching, naming it in notReady", () => {
  const h = rollUpHealth({ prod: watching(), dev: watching({ state: "unreachable", synced: false }) }, IDLE);
  assert.equal(h.status, "degraded");
  assert.equal(h.ready, false);
  assert.deepEqual(h.notReady, ["dev"]);
  assert.deepEqual(Object.keys(h), ["status", "ready", "clusters", "notReady", "controller"]);
});

Deno.test("rollUpHealth() is not ready while a cluster provider's first read is pending, naming it after the clusters", () => {
  const provider = (synced: boolean, state: "watching" | "syncing" | "forbidden") => ({
    state,
    synced,
    watches: ["prod:hub"],
    clusters: 0,
    lastError: null,
    errors: [],
  });
  const pending = rollUpHealth({ prod: watching(), dev: watching({ synced: false }) }, IDLE, {
    providers: { folder: provider(true, "watching"), secret: provider(false, "syncing") },
  });
  assert.equal(pending.ready, false);
  assert.deepEqual(pending.notReady, ["dev", "secret provider"]);
  assert.equal(pending.status, "ok", "a provider's first list pending is not a degradation of any cluster");
  const refused = rollUpHealth({ prod: watching() }, IDLE, { providers: { secret: provider(false, "forbidden") } });
  assert.equal(refused.ready, false, "a provider that never listed (forbidden) holds readiness back");
  assert.deepEqual(refused.notReady, ["secret provider"]);
  const done = rollUpHealth({ prod: watching() }, IDLE, { providers: { secret: provider(true, "forbidden") } });
  assert.equal(done.ready, true, "one that listed once and fails later does not");
  assert.equal("notReady" in done, false);
});

Deno.test("rollUpHealth() is failing when one cluster's watch is wedged", () => {
  const h = rollUpHealth({ prod: watching(), dev: watching({ wedged: true }) }, IDLE);
  assert.equal(h.status, "failing");
});

Deno.test("rollUpHealth() calls the controller wedged only when keys wait, nothing runs and nothing completed for 2 × timeout + 60 s", () => {
  const limit = 30_000 * 2 + 60_000;
  const at = (over: Partial<ControllerProgress>) => rollUpHealth({ prod: watching() }, { ...IDLE, queued: 3, ...over });
  assert.equal(at({ idleForMs: limit }).controller.wedged, false, "exactly at the limit is not past it");
  const wedged = at({ idleForMs: limit + 1 });
  assert.equal(wedged.controller.wedged, true);
  assert.equal(wedged.status, "failing");
  assert.deepEqual(wedged.controller, { inFlight: 0, queued: 3, wedged: true });
  assert.equal(at({ idleForMs: limit + 1, inFlight: 1 }).controller.wedged, false, "a reconcile running");
  assert.equal(at({ idleForMs: limit + 1, queued: 0 }).controller.wedged, false, "nothing queued");
  assert.equal(at({ idleForMs: limit + 1, running: false }).controller.wedged, false, "a hub not started");
});

Deno.test("rollUpHealth() without clusters is not ready, unless a shard replica that owns nothing is standing by", () => {
  assert.equal(rollUpHealth({}, IDLE).ready, false);
  const sharded = rollUpHealth({}, IDLE, { sharded: true });
  assert.equal(sharded.ready, true);
  assert.equal(sharded.status, "ok");
  assert.equal(rollUpHealth({ prod: watching({ synced: false }) }, IDLE, { sharded: true }).ready, false);
});

Deno.test("rollUpHealth() stays ready while clusters that do not gate readiness are unreachable or never synced, and still reports them degraded", () => {
  const h = rollUpHealth({
    prod: watching({ gatesReadiness: true }),
    "r-closed": watching({ state: "unreachable", synced: false, gatesReadiness: false }),
    "team/edge": watching({ state: "registering", synced: false, gatesReadiness: false }),
  }, IDLE);
  assert.equal(h.ready, true);
  assert.equal("notReady" in h, false);
  assert.equal(h.status, "degraded", "their state still shows in the status");
  const gating = rollUpHealth({ prod: watching({ state: "unreachable", synced: false, gatesReadiness: true }) }, IDLE);
  assert.equal(gating.ready, false);
  assert.deepEqual(gating.notReady, ["prod"]);
  const onlyUntrusted = rollUpHealth(
    { x: watching({ state: "unreachable", synced: false, gatesReadiness: false }) },
    IDLE,
  );
  assert.equal(onlyUntrusted.ready, true, "one cluster at least, even one that does not gate");
});

Deno.test("rollUpHealth() names the clusters holding readiness back in name order, then the providers", () => {
  const h = rollUpHealth(
    {
      zeta: watching({ synced: false }),
      alpha: watching({ synced: false }),
      mid: watching({ synced: false, gatesReadiness: false }),
    },
    IDLE,
    {
      providers: { secret: { state: "syncing", synced: false, watches: [], clusters: 0, lastError: null, errors: [] } },
    },
  );
  assert.deepEqual(h.notReady, ["alpha", "zeta", "secret provider"]);
});

Deno.test("rollUpHealth() is failing when a cluster that does not gate readiness is wedged: a wedged worker is the hub's own", () => {
  assert.equal(
    rollUpHealth({ prod: watching(), x: watching({ wedged: true, gatesReadiness: false }) }, IDLE).status,
    "failing",
  );
});

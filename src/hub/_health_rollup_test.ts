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
  const h = rollUpHealth({ prod: watching(), dev: watching() }, IDLE, false);
  assert.equal(h.status, "ok");
  assert.equal(h.ready, true);
  assert.equal("notReady" in h, false);
  assert.deepEqual(h.controller, { inFlight: 0, queued: 0, wedged: false });
  assert.deepEqual(Object.keys(h), ["status", "ready", "clusters", "controller"]);
});

Deno.test("rollUpHealth() is degraded and not ready while a cluster is not watching, naming it in notReady", () => {
  const h = rollUpHealth({ prod: watching(), dev: watching({ state: "unreachable", synced: false }) }, IDLE, false);
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
  const pending = rollUpHealth({ prod: watching(), dev: watching({ synced: false }) }, IDLE, false, {
    folder: provider(true, "watching"),
    secret: provider(false, "syncing"),
  });
  assert.equal(pending.ready, false);
  assert.deepEqual(pending.notReady, ["dev", "secret provider"]);
  assert.equal(pending.status, "ok", "a provider's first list pending is not a degradation of any cluster");
  const refused = rollUpHealth({ prod: watching() }, IDLE, false, { secret: provider(false, "forbidden") });
  assert.equal(refused.ready, false, "a provider that never listed (forbidden) holds readiness back");
  assert.deepEqual(refused.notReady, ["secret provider"]);
  const done = rollUpHealth({ prod: watching() }, IDLE, false, { secret: provider(true, "forbidden") });
  assert.equal(done.ready, true, "one that listed once and fails later does not");
  assert.equal("notReady" in done, false);
});

Deno.test("rollUpHealth() is failing when one cluster's watch is wedged", () => {
  const h = rollUpHealth({ prod: watching(), dev: watching({ wedged: true }) }, IDLE, false);
  assert.equal(h.status, "failing");
});

Deno.test("rollUpHealth() calls the controller wedged only when keys wait, nothing runs and nothing completed for 2 × timeout + 60 s", () => {
  const limit = 30_000 * 2 + 60_000;
  const at = (over: Partial<ControllerProgress>) =>
    rollUpHealth({ prod: watching() }, { ...IDLE, queued: 3, ...over }, false);
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
  assert.equal(rollUpHealth({}, IDLE, false).ready, false);
  const sharded = rollUpHealth({}, IDLE, true);
  assert.equal(sharded.ready, true);
  assert.equal(sharded.status, "ok");
  assert.equal(rollUpHealth({ prod: watching({ synced: false }) }, IDLE, true).ready, false);
});

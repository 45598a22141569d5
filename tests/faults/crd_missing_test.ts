// Fault: the Uuid CRD is missing (404) in one cluster. It must show `missing-crd`, be retried periodically, and start
// working as soon as the CRD is installed, without a restart.

import assert from "node:assert/strict";
import { UUID_V4, waitAllAssigned } from "../../dev/support/cluster_api.ts";
import { SEED_CRD_FILE } from "../../dev/support/crds.ts";
import { metricSeries, metricSum, parseMetrics } from "../support/prometheus_text.ts";
import { faultScenario, logLines, recordFigure, secondsSince, waitStatus } from "../support/fault_harness.ts";

Deno.test("A cluster without the Uuid CRD, at start or deleted at runtime, shows missing-crd and is retried, the others are served, and installing the CRD makes it work without a restart", async () => {
  await using s = await faultScenario("nocrd", { apiserver: { installCrds: false } });
  const { f, api, ns } = s;
  const kubeconfig = await s.kubeconfig([f.context("nocrd")]);
  const hub = s.startHub(["prod", "nocrd"], { extraKubeconfigs: [kubeconfig], namespaces: [ns], label: "crd-missing" });

  const first = await waitStatus(hub, "missing-crd", (x) => x.clusters.nocrd.state === "missing-crd", 20_000);
  const firstAt = performance.now();
  assert.match(first.clusters.nocrd.lastError, /crds\/uuid\.yaml|CRD|does not serve/);
  await waitStatus(hub, "prod watching", (x) => x.clusters.prod.state === "watching", 20_000);
  const healthz = await hub.get("/healthz");
  assert.equal(healthz.status, 200);
  assert.equal(healthz.body.status, "degraded");
  // Retried periodically (backoff from 1 s): more attempts a few seconds later.
  await new Promise((r) => setTimeout(r, 5_000));
  const later = (await hub.get("/status")).body.clusters.nocrd;
  const windowSeconds = secondsSince(firstAt);
  assert.equal(later.state, "missing-crd");
  const retries = later.connectAttempts - first.clusters.nocrd.connectAttempts;
  assert.ok(retries >= 1, JSON.stringify([first, later]));
  // No hot loop, whatever the machine's speed: a backoff from 1 s allows at most one retry per second of the window
  // actually measured (a loop without backoff makes dozens).
  assert.ok(retries <= Math.ceil(windowSeconds), `no hot loop: ${retries} retries in ${windowSeconds} s`);
  // Logged, but never more than once per attempt (the same error again is logged at debug, so usually once):
  // counted against the attempts /status reports, not against time.
  const lines = logLines(hub, (l) => l.cluster === "nocrd" && l.level !== "info" && l.level !== "debug");
  assert.ok(
    lines.length >= 1 && lines.length <= later.connectAttempts + 1,
    `at most one line per attempt: ${lines.length} lines for ${later.connectAttempts} attempts`,
  );

  const installedAt = performance.now();
  await f.installCrds();
  await api.createUuids(ns, ["c-0", "c-1", "c-2"]);
  await waitStatus(hub, "nocrd watching", (x) => x.clusters.nocrd.state === "watching", 45_000);
  const installed = await waitAllAssigned(api, ns, 3, 30_000);
  const recoveredIn = secondsSince(installedAt);
  assert.equal(hub.exited, undefined);
  assert.equal((await hub.get("/readyz")).status, 200);

  // Deleted at runtime, while watched: the watch ends, the relist answers 404, and a reinstall heals it again.
  await f.kubectl(["delete", "crd", "uuid.demo.operator", "--wait=true", "--timeout=60s"]);
  const deletedAt = performance.now();
  const gone = await waitStatus(hub, "missing-crd again", (x) => x.clusters.nocrd.state === "missing-crd", 30_000);
  const noticedIn = secondsSince(deletedAt);
  assert.equal((await hub.get("/healthz")).status, 200);
  assert.match(gone.clusters.nocrd.lastError, /\b404\b|not found|does not serve/i);
  const reinstalledAt = performance.now();
  await f.installCrds();
  await api.createUuids(ns, ["d-0", "d-1"]);
  const reinstalled = await waitAllAssigned(api, ns, 2, 45_000);
  const reRecoveredIn = secondsSince(reinstalledAt);
  await waitStatus(hub, "2 objects in the store", (x) => x.clusters.nocrd.objects === 2, 15_000);
  // Figures: `lost` counts objects created that never showed a UUID. No `changed`: deleting the CRD deletes its
  // objects, so no UUID outlives the fault to be compared.
  const lost = (m: Map<string, string>, created: string[]) => created.filter((n) => !UUID_V4.test(m.get(n) ?? ""));

  await recordFigure({
    fault: "404: CRD deleted at runtime, then reinstalled",
    noticedSeconds: noticedIn,
    recoverSeconds: reRecoveredIn,
    lost: lost(reinstalled, ["d-0", "d-1"]).length,
    connectionsDuringOutage: "n/a",
  });
  await recordFigure({
    fault: "404: CRD missing, then installed",
    recoverSeconds: recoveredIn,
    lost: lost(installed, ["c-0", "c-1", "c-2"]).length,
    connectionsDuringOutage: `${later.connectAttempts} pre-flight attempts in ${windowSeconds} s`,
  });
});

Deno.test("A CRD switched at runtime between the seed shape (no status subresource) and the production shape never leaves an object without its UUID", async () => {
  await using s = await faultScenario("crdswap");
  const { f, api, ns } = s;
  const observer = s.observe();
  const kubeconfig = await s.kubeconfig([f.context("crdswap")]);
  const hub = s.startHub(["crdswap"], { extraKubeconfigs: [kubeconfig], label: "crd-swap" });
  await hub.waitReady(60_000);
  await api.createUuids(ns, ["prod-shape-0"]);
  await waitAllAssigned(api, ns, 1, 20_000);

  // To the seed shape: status lives in the main resource.
  await f.installCrdFiles([SEED_CRD_FILE], false);
  await api.createUuids(ns, ["seed-shape-0", "seed-shape-1"]);
  await waitAllAssigned(api, ns, 3, 30_000);
  // The seed CRD's schema prunes status.observedGeneration: the write's uuid and state stuck, so that is not a
  // dropped status, and no reconcile may fail over it (each one did, with a rediscovery, before the fix).
  const metrics = parseMetrics((await hub.get("/metrics")).text);
  const success = metricSeries(metrics, "controller_runtime_reconcile_total", {
    cluster: "crdswap",
    result: "success",
  });
  assert.ok(success >= 3, `${success} successful reconciles in crdswap`);
  assert.equal(
    metricSum(metrics, "controller_runtime_reconcile_errors_total", { cluster: "crdswap" }),
    0,
    "no reconcile failed",
  );

  // Back to the production shape: a status written to the main resource would now be silently dropped.
  await f.installCrds();
  const swappedAt = performance.now();
  await api.createUuids(ns, ["prod-shape-1", "prod-shape-2"]);
  const all = await waitAllAssigned(api, ns, 5, 30_000);
  const recoveredIn = secondsSince(swappedAt);
  assert.equal(new Set(all.values()).size, 5);
  // The observer's own watch relists after the CRD was replaced: it may see the last two after the GET above did.
  await observer.caughtUp(all.keys());
  observer.assertStable(all.keys());
  await recordFigure({
    fault: "CRD swapped seed -> production shape at runtime",
    recoverSeconds: recoveredIn,
    lost: [...all.values()].filter((u) => !UUID_V4.test(u)).length,
    changed: observer.changed().length,
    connectionsDuringOutage: "n/a",
  });
});

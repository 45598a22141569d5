// Fault: the Uuid CRD is missing (404) in one cluster. It must show `missing-crd`, be retried periodically, and start
// working as soon as the CRD is installed, without a restart.

import assert from "node:assert/strict";
import { waitAllAssigned } from "../support/cluster_api.ts";
import { SEED_CRD_FILE } from "../support/crds.ts";
import { FaultApiserver, kubeconfigText, tempDir } from "../support/fault_cluster.ts";
import {
  Cleanup,
  finishHub,
  logLines,
  recordFigure,
  secondsSince,
  startHub,
  waitStatus,
} from "../support/fault_harness.ts";

Deno.test("A cluster without the Uuid CRD, at start or deleted at runtime, shows missing-crd and is retried, the others are served, and installing the CRD makes it work without a restart", async () => {
  await using cleanup = new Cleanup();
  const f = cleanup.add(await FaultApiserver.start({ name: "nocrd", installCrds: false }), (x) => x.destroy());
  const dir = cleanup.add(await tempDir("nocrd"), (d) => d.remove());
  const api = cleanup.add(f.api("nocrd"), (a) => a.close());
  const kubeconfig = await dir.write("kubeconfig.yaml", kubeconfigText([f.context("nocrd")]));
  const hub = startHub(["prod", "nocrd"], { extraKubeconfigs: [kubeconfig] });
  cleanup.defer(() => finishHub(hub, "crd-missing", [f.adminToken]));

  const first = await waitStatus(hub, "missing-crd", (s) => s.clusters.nocrd.state === "missing-crd", 20_000);
  assert.match(first.clusters.nocrd.lastError, /crds\/uuid\.yaml|CRD|does not serve/);
  await waitStatus(hub, "prod watching", (s) => s.clusters.prod.state === "watching", 20_000);
  const healthz = await hub.get("/healthz");
  assert.equal(healthz.status, 200);
  assert.equal(healthz.body.status, "degraded");
  // Retried periodically (backoff from 1 s): more attempts a few seconds later.
  await new Promise((r) => setTimeout(r, 5_000));
  const later = (await hub.get("/status")).body.clusters.nocrd;
  assert.equal(later.state, "missing-crd");
  assert.ok(later.connectAttempts > first.clusters.nocrd.connectAttempts, JSON.stringify([first, later]));
  assert.ok(later.connectAttempts <= 6, `no hot loop: ${later.connectAttempts} attempts in about 6 s`);
  const lines = logLines(hub, (l) => l.cluster === "nocrd" && l.level !== "info");
  assert.ok(lines.length >= 2 && lines.length <= 6, `one line per attempt, ${lines.length}`);

  const installedAt = performance.now();
  await f.installCrds();
  await api.createNamespace("nocrd-ns");
  await api.createUuids("nocrd-ns", ["c-0", "c-1", "c-2"]);
  await waitStatus(hub, "nocrd watching", (s) => s.clusters.nocrd.state === "watching", 45_000);
  await waitAllAssigned(api, "nocrd-ns", 3, 30_000);
  const recoveredIn = secondsSince(installedAt);
  assert.equal(hub.exited, undefined);
  assert.equal((await hub.get("/readyz")).status, 200);

  // Deleted at runtime, while watched: the watch ends, the relist answers 404, and a reinstall heals it again.
  await f.kubectl(["delete", "crd", "uuid.demo.operator", "--wait=true", "--timeout=60s"]);
  const deletedAt = performance.now();
  const gone = await waitStatus(hub, "missing-crd again", (s) => s.clusters.nocrd.state === "missing-crd", 30_000);
  const noticedIn = secondsSince(deletedAt);
  assert.equal((await hub.get("/healthz")).status, 200);
  assert.match(gone.clusters.nocrd.lastError, /404|not found|does not serve/i);
  const reinstalledAt = performance.now();
  await f.installCrds();
  await api.createUuids("nocrd-ns", ["d-0", "d-1"]);
  await waitAllAssigned(api, "nocrd-ns", 2, 45_000);
  const reRecoveredIn = secondsSince(reinstalledAt);
  await waitStatus(hub, "2 objects in the store", (s) => s.clusters.nocrd.objects === 2, 15_000);

  await recordFigure({
    fault: "404: CRD deleted at runtime, then reinstalled",
    noticedSeconds: noticedIn,
    recoverSeconds: reRecoveredIn,
    lost: 0,
    changed: 0,
    connectionsDuringOutage: "n/a",
  });
  await recordFigure({
    fault: "404: CRD missing, then installed",
    recoverSeconds: recoveredIn,
    lost: 0,
    changed: 0,
    connectionsDuringOutage: `${later.connectAttempts} pre-flight attempts in ~6 s`,
  });
});

Deno.test("A CRD switched at runtime between the seed shape (no status subresource) and the production shape never leaves an object without its UUID", async () => {
  await using cleanup = new Cleanup();
  const f = cleanup.add(await FaultApiserver.start({ name: "crdswap" }), (x) => x.destroy());
  const dir = cleanup.add(await tempDir("crdswap"), (d) => d.remove());
  const api = cleanup.add(f.api("crdswap"), (a) => a.close());
  await api.createNamespace("swap-ns");
  const observer = cleanup.add(api.observe("swap-ns"), (o) => o.stop());
  const kubeconfig = await dir.write("kubeconfig.yaml", kubeconfigText([f.context("crdswap")]));
  const hub = startHub(["crdswap"], { extraKubeconfigs: [kubeconfig] });
  cleanup.defer(() => finishHub(hub, "crd-swap", [f.adminToken]));
  await hub.waitReady(60_000);
  await api.createUuids("swap-ns", ["prod-shape-0"]);
  await waitAllAssigned(api, "swap-ns", 1, 20_000);

  // To the seed shape: status lives in the main resource.
  await f.installCrdFiles([SEED_CRD_FILE], false);
  await api.createUuids("swap-ns", ["seed-shape-0", "seed-shape-1"]);
  await waitAllAssigned(api, "swap-ns", 3, 30_000);

  // Back to the production shape: a status written to the main resource would now be silently dropped.
  await f.installCrds();
  const swappedAt = performance.now();
  await api.createUuids("swap-ns", ["prod-shape-1", "prod-shape-2"]);
  const all = await waitAllAssigned(api, "swap-ns", 5, 30_000);
  const recoveredIn = secondsSince(swappedAt);
  assert.equal(new Set(all.values()).size, 5);
  assert.deepEqual(observer.changed(), []);
  await recordFigure({
    fault: "CRD swapped seed -> production shape at runtime",
    recoverSeconds: recoveredIn,
    lost: 0,
    changed: 0,
    connectionsDuringOutage: "n/a",
  });
});

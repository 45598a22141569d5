// End-to-end: two hubs with --leader-elect on the same real clusters: one reconciles, the other watches; killing the
// leader hands over within the lease duration; a clean stop hands over at once; no UUID is written twice.
// deno-lint-ignore-file no-explicit-any -- /status and the Lease are checked field by field.

import assert from "node:assert/strict";
import { HubProcess } from "../support/hub_process.ts";
import { kubectlOk, requireClusters, testNamespace } from "../support/mod.ts";
import { metricSum, parseMetrics, StatusWrites } from "./_support.ts";
import { type ClusterApi, localApi, names, waitAllAssigned, waitFor } from "../support/cluster_api.ts";

const CLUSTERS = ["prod", "staging"];
const LEASE_S = 15; // controller-runtime's default, used as is
const RETRY_S = 2;
const JITTER = 1.2;

const assigned = (api: ClusterApi, namespace: string, count: number, timeoutMs = 90_000) =>
  waitAllAssigned(api, namespace, count, timeoutMs);

async function metrics(hub: HubProcess) {
  return parseMetrics((await hub.get("/metrics")).text);
}

async function lease(namespace: string): Promise<any> {
  return JSON.parse(
    await kubectlOk("prod", ["get", "lease", "operator-hub.demo.operator", "-n", namespace, "-o", "json"]),
  )
    .spec;
}

Deno.test("Two hubs with --leader-elect: exactly one reconciles, SIGKILL of the leader hands over within the lease duration, SIGTERM hands over at once, and no UUID is written twice", async () => {
  requireClusters();
  const ns = await testNamespace("leader", { contexts: CLUSTERS });
  const apis = CLUSTERS.map((c) => localApi(c));
  const writes = CLUSTERS.map((c) => new StatusWrites(c, ns.name));
  const histories = apis.map((a) => a.observe(ns.name));
  // The Lease lives in the first cluster (prod), in the test namespace.
  const args = ["--namespace", ns.name, "--leader-elect", "--leader-elect-namespace", ns.name];
  const hubs: HubProcess[] = [];
  const start = () => {
    const h = HubProcess.start({ clusters: CLUSTERS, args });
    hubs.push(h);
    return h;
  };
  try {
    await Promise.all(writes.map((w) => w.ready));
    const a = start();
    const aStatus = await a.waitStatus((s) => s.ready && s.leaderElection?.leader === true, 60_000, "a leads");
    const aId = aStatus.leaderElection.identity;
    assert.equal(aStatus.leaderElection.cluster, "prod");
    const b = start();
    const bStatus = await b.waitStatus((s) => s.ready && s.leaderElection?.holder === aId, 60_000, "b stands by");
    assert.equal(bStatus.leaderElection.leader, false);
    assert.equal(bStatus.status, "ok", "a standby is healthy");
    assert.equal((await b.get("/readyz")).status, 200, "a standby is ready once its caches are synced");

    // Phase 1: a reconciles everything, b nothing, although b watches the same objects.
    await Promise.all(apis.map((api) => api.createUuids(ns.name, names("one", 20))));
    await Promise.all(apis.map((api) => assigned(api, ns.name, 20)));
    await waitFor(async () => (await b.get("/status")).body.clusters.prod.objects === 20, "b's cache has them");
    const [ma, mb] = [await metrics(a), await metrics(b)];
    for (const cluster of CLUSTERS) {
      assert.ok(metricSum(ma, "controller_runtime_reconcile_total", { cluster, result: "success" }) >= 20);
      assert.equal(metricSum(mb, "controller_runtime_reconcile_total", { cluster }), 0, `b reconciled in ${cluster}`);
      assert.equal(metricSum(mb, "rest_client_requests_total", { cluster, method: "PATCH" }), 0);
    }
    assert.equal(metricSum(ma, "leader_election_master_status", { name: "operator-hub.demo.operator" }), 1);
    assert.equal(metricSum(mb, "leader_election_master_status", { name: "operator-hub.demo.operator" }), 0);

    // Phase 2: SIGKILL the leader (no release); b takes over once the Lease expired, and not earlier.
    await a.kill();
    const killedAt = Date.now();
    const lastByA = await lease(ns.name);
    assert.equal(lastByA.holderIdentity, aId);
    await Promise.all(apis.map((api) => api.createUuids(ns.name, names("two", 20))));
    await b.waitStatus((s) => s.leaderElection?.leader === true, 40_000, "b takes over");
    const handover = (Date.now() - killedAt) / 1000;
    const byB = await lease(ns.name);
    assert.equal(byB.leaseTransitions, lastByA.leaseTransitions + 1);
    const gap = (Date.parse(byB.acquireTime) - Date.parse(lastByA.renewTime)) / 1000;
    // Safety: b waited a full lease duration after a's last renewal. Liveness: at most one jittered retry more.
    assert.ok(gap >= LEASE_S, `b acquired ${gap} s after a's last renewal`);
    assert.ok(gap <= LEASE_S + RETRY_S * (1 + JITTER) + 1, `b acquired ${gap} s after a's last renewal`);
    assert.ok(handover <= LEASE_S + RETRY_S * (1 + JITTER) + 1, `handover took ${handover} s after the kill`);
    await Promise.all(apis.map((api) => assigned(api, ns.name, 40)));
    const mb2 = await metrics(b);
    for (const cluster of CLUSTERS) {
      assert.ok(metricSum(mb2, "controller_runtime_reconcile_total", { cluster, result: "success" }) >= 20);
    }
    assert.equal(metricSum(mb2, "leader_election_master_status", { name: "operator-hub.demo.operator" }), 1);

    // Phase 3: a new standby c; SIGTERM b: it drains, releases the Lease, and c takes over within a retry period.
    const c = start();
    await c.waitStatus((s) => s.ready && s.leaderElection?.holder === byB.holderIdentity, 60_000, "c stands by");
    const stoppedAt = Date.now();
    assert.equal((await b.stop("SIGTERM")).code, 0, b.tail());
    await c.waitStatus((s) => s.leaderElection?.leader === true, 20_000, "c takes over");
    const graceful = (Date.now() - stoppedAt) / 1000;
    assert.ok(graceful <= RETRY_S * (1 + JITTER) + 2, `graceful handover took ${graceful} s`);
    console.log(`handover: ${handover} s after SIGKILL (${gap} s after the last renewal), ${graceful} s after SIGTERM`);
    await Promise.all(apis.map((api) => api.createUuids(ns.name, names("three", 10))));
    await Promise.all(apis.map((api) => assigned(api, ns.name, 50)));

    // Every object got exactly one status write, and no UUID ever changed.
    await new Promise((r) => setTimeout(r, 1500));
    for (const [i, w] of writes.entries()) {
      assert.deepEqual(w.repeated(), [], `${CLUSTERS[i]}: objects written more than once`);
      assert.equal(w.total(), 50, `${CLUSTERS[i]}: status writes`);
    }
    for (const [i, h] of histories.entries()) {
      assert.deepEqual(h.changed(), [], `${CLUSTERS[i]}: changed UUIDs`);
      assert.deepEqual(h.partial, [], `${CLUSTERS[i]}: half-written statuses`);
    }
    assert.equal((await c.stop()).code, 0, c.tail());
  } finally {
    await Promise.all(hubs.map((h) => h.kill()));
    await Promise.all(histories.map((h) => h.stop()));
    await Promise.all(writes.map((w) => w.stop()));
    await Promise.all(apis.map((a) => a.deleteAllUuids(ns.name).catch(() => {})));
    apis.forEach((a) => a.close());
    await ns.cleanup();
  }
});

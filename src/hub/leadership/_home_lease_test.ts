// Tests of the hub's leader election against the real local apiserver (context prod), in a namespace of the test's own.
import assert from "node:assert/strict";
import { waitFor } from "../../../dev/support/cluster_api.ts";
import { inLocalNamespace } from "../../../dev/support/local_client.ts";
import { KUBECONFIG_PATH } from "../../../dev/clusters/clusters.ts";
import { type ClusterAccess, loadContexts } from "../../kube/mod.ts";
import { silentLogger, SystemClock } from "../../util/mod.ts";
import { LeaseClient, microTime } from "./leases.ts";
import { HubMetrics } from "../health/metrics.ts";
import { HomeLease, type HubLeaderElection, leasePermissions } from "./_home_lease.ts";

/** Hang guard: a Lease is taken on the first request; 20 s is far above any run seen. */
const HANG_GUARD_MS = 20_000;

async function prodAccess(): Promise<ClusterAccess> {
  return (await loadContexts({ files: [KUBECONFIG_PATH] })).select(["prod"])[0];
}

async function leaderGauge(metrics: HubMetrics, name: string): Promise<number | undefined> {
  const m = (await metrics.registry.metrics()).match(
    new RegExp(`^leader_election_master_status\\{name="${name}"\\} (\\S+)$`, "m"),
  );
  return m ? Number(m[1]) : undefined;
}

function homeLease(le: HubLeaderElection) {
  const metrics = new HubMetrics(() => ({}));
  const changes: boolean[] = [];
  const lease = new HomeLease(le, {
    clock: new SystemClock(),
    requestTimeoutMs: 10_000,
    logger: silentLogger(),
    metrics,
    onChange: (leading) => changes.push(leading),
  });
  return { lease, metrics, changes };
}

Deno.test("HomeLease takes a free Lease, shows it in the leader gauge, and hands it back when stopped", () =>
  inLocalNamespace("prod", "home-lease", async (client, namespace) => {
    const le = { cluster: "prod", access: await prodAccess(), namespace, name: "hub", identity: "replica-a" };
    const { lease, metrics, changes } = homeLease(le);
    assert.equal(lease.leading, false);
    assert.equal(await leaderGauge(metrics, "hub"), 0, "the gauge exists at 0 before the first campaign");
    const stop = new AbortController();
    const running = lease.start(stop.signal);
    try {
      await waitFor(() => lease.leading, "leading", HANG_GUARD_MS, 20);
      assert.deepEqual(changes, [true]);
      assert.equal(await leaderGauge(metrics, "hub"), 1);
      const held = await new LeaseClient(client, namespace).get("hub");
      assert.equal(held?.spec?.holderIdentity, "replica-a");
      const snap = lease.snapshot();
      assert.equal(snap.cluster, "prod");
      assert.equal(snap.leader, true);
      assert.equal(snap.identity, "replica-a");
      assert.match(
        await metrics.registry.metrics(),
        /^rest_client_requests_total\{cluster="prod",code="20[01]",method="(GET|POST|PUT)"\} [1-9]/m,
      );
    } finally {
      stop.abort();
      await running;
    }
    assert.deepEqual(changes, [true, false]);
    assert.equal(lease.leading, false);
    assert.equal(await leaderGauge(metrics, "hub"), 0);
    const released = await new LeaseClient(client, namespace).get("hub");
    assert.equal(released?.spec?.holderIdentity, "", "the Lease is handed back on stop");
  }));

Deno.test("HomeLease stands by while another replica holds a live Lease", () =>
  inLocalNamespace("prod", "home-lease", async (client, namespace) => {
    const now = microTime(Date.now());
    await new LeaseClient(client, namespace).create("hub", {
      holderIdentity: "replica-b",
      leaseDurationSeconds: 3600,
      acquireTime: now,
      renewTime: now,
      leaseTransitions: 0,
    });
    const le = { cluster: "prod", access: await prodAccess(), namespace, name: "hub", identity: "replica-a" };
    const { lease, metrics, changes } = homeLease(le);
    const stop = new AbortController();
    const running = lease.start(stop.signal);
    try {
      await waitFor(() => lease.snapshot().holder === "replica-b", "the other holder observed", HANG_GUARD_MS, 20);
      assert.equal(lease.leading, false);
      assert.equal(lease.snapshot().leader, false);
      assert.deepEqual(changes, []);
      assert.equal(await leaderGauge(metrics, "hub"), 0);
    } finally {
      stop.abort();
      await running;
    }
    assert.deepEqual(changes, [], "a standby that never led reports no change on stop");
    const still = await new LeaseClient(client, namespace).get("hub");
    assert.equal(still?.spec?.holderIdentity, "replica-b", "a standby leaves the other's Lease alone");
  }));

Deno.test("leasePermissions() asks for get, create and update on Leases in the Lease's namespace only", () => {
  const checks = leasePermissions({
    cluster: "prod",
    access: {} as ClusterAccess,
    namespace: "hub-system",
    name: "hub",
    identity: "me",
  });
  assert.deepEqual(checks, [
    { verb: "get", group: "coordination.k8s.io", resource: "leases", namespace: "hub-system" },
    { verb: "create", group: "coordination.k8s.io", resource: "leases", namespace: "hub-system" },
    { verb: "update", group: "coordination.k8s.io", resource: "leases", namespace: "hub-system" },
  ]);
});

// Tests of the shard coordinator against the real local apiserver (context prod, the home cluster), with short Lease
// timings, its Leases in a namespace of the test's own, and recording targets of our own in place of the Hub.

import assert from "node:assert/strict";
import { waitFor } from "../../../dev/support/cluster_api.ts";
import { inLocalNamespace } from "../../../dev/support/local_client.ts";
import { KUBECONFIG_PATH } from "../../../dev/clusters/clusters.ts";
import { type ClusterAccess, loadContexts } from "../../kube/mod.ts";
import { Logger } from "../../util/mod.ts";
import type { ClusterRegistration } from "../hub.ts";
import { LeaseClient } from "../leadership/leases.ts";
import { fenceLeaseName, peerLeaseName } from "./lease_names.ts";
import { ShardCoordinator } from "./shard_coordinator.ts";
import { RecordingTarget, unreachableAccess } from "../../../dev/support/shard_target.ts";

/**
 * A short renew period, so a replica settles (two periods) and passes ownership quickly; the default lease duration and
 * renew deadline, so a renewal slowed by a loaded machine never lapses a replica mid-test. Graceful hand-overs do not
 * wait for the lease duration (the stopping replica deletes its peer Lease and frees its fences).
 */
const TIMINGS = { peerLeaseDurationMs: 15_000, peerRenewDeadlineMs: 10_000, peerRenewPeriodMs: 300 };
const REG: ClusterRegistration = { provider: "flag", registeredAt: "2026-12-03T00:00:00Z" };
const CLUSTERS = ["c1", "c2", "c3", "c4", "c5", "c6"];

/** A target that keeps the set of clusters engaged in it. */

interface Replica {
  coordinator: ShardCoordinator;
  target: RecordingTarget;
  stop(): Promise<void>;
}

async function replica(home: ClusterAccess, namespace: string, identity: string): Promise<Replica> {
  const coordinator = new ShardCoordinator({
    home,
    namespace,
    group: "g",
    identity,
    timings: TIMINGS,
    logger: new Logger({ level: "error" }),
  });
  const target = new RecordingTarget();
  coordinator.connect(target);
  for (const c of CLUSTERS) await coordinator.engage(c, unreachableAccess(c), REG);
  const ac = new AbortController();
  const running = coordinator.start(ac.signal);
  return {
    coordinator,
    target,
    stop: async () => {
      ac.abort();
      await running;
    },
  };
}

function inNamespace(fn: (home: ClusterAccess, namespace: string, leases: LeaseClient) => Promise<void>) {
  return inLocalNamespace("prod", "shard-coordinator", async (client, ns) => {
    const [home] = (await loadContexts({ files: [KUBECONFIG_PATH] })).select(["prod"]);
    await fn(home, ns, new LeaseClient(client, ns));
  });
}

Deno.test("ShardCoordinator.start refuses to run before a target is connected", async () => {
  const coordinator = new ShardCoordinator({
    home: unreachableAccess("home"),
    namespace: "ns",
    group: "g",
    identity: "a",
    logger: new Logger({ level: "error" }),
  });
  await assert.rejects(coordinator.start(new AbortController().signal), /connect\(\) a target first/);
});

Deno.test("A lone replica takes every registered cluster's fence and engages it; on stop it frees them and deletes its peer Lease", () =>
  inNamespace(async (home, ns, leases) => {
    const a = await replica(home, ns, "replica-a");
    let stopped = false;
    try {
      const s = await waitFor(() => {
        const s = a.coordinator.status();
        return s.owned === CLUSTERS.length && s;
      }, "replica-a owning every cluster");
      assert.equal(s.live, true);
      assert.equal(s.unowned, 0);
      assert.equal(s.share, 1);
      assert.equal(s.leases, `${ns}/g`);
      assert.deepEqual(s.peers.map((p) => [p.identity, p.live, p.self]), [["replica-a", true, true]]);
      assert.deepEqual([...a.target.engaged].sort(), CLUSTERS);
      for (const c of CLUSTERS) {
        assert.equal((await leases.get(fenceLeaseName("g", c)))?.spec?.holderIdentity, "replica-a", c);
        assert.equal(a.coordinator.owner(c), "replica-a");
      }
      await a.stop();
      stopped = true;
      assert.equal(await leases.get(peerLeaseName("g", "replica-a")), undefined, "peer Lease deleted");
      for (const c of CLUSTERS) assert.equal((await leases.get(fenceLeaseName("g", c)))?.spec?.holderIdentity, "");
      assert.equal(a.target.engaged.size, 0, "nothing engaged after the stop");
    } finally {
      if (!stopped) await a.stop();
    }
  }));

Deno.test("Two replicas share the clusters: each fence names one of them, and no cluster is engaged in both", () =>
  inNamespace(async (home, ns, leases) => {
    const a = await replica(home, ns, "replica-a");
    const b = await replica(home, ns, "replica-b");
    let aStopped = false;
    try {
      // Every sample on the way must have no cluster engaged in both; the wait ends once the split is settled: both
      // own a share, both agree on every owner, and each cluster is engaged exactly where its fence names.
      const overlaps: string[] = [];
      await waitFor(
        async () => {
          for (const c of CLUSTERS) if (a.target.engaged.has(c) && b.target.engaged.has(c)) overlaps.push(c);
          const sa = a.coordinator.status();
          const sb = b.coordinator.status();
          if (!(sa.owned > 0 && sb.owned > 0 && sa.owned + sb.owned === CLUSTERS.length)) return false;
          for (const c of CLUSTERS) {
            const holder = (await leases.get(fenceLeaseName("g", c)))?.spec?.holderIdentity;
            const engagedIn = [a, b].filter((r) => r.target.engaged.has(c)).map((r) => r.coordinator.identity);
            if (a.coordinator.owner(c) !== b.coordinator.owner(c)) return false;
            if (engagedIn.length !== 1 || engagedIn[0] !== holder || holder !== a.coordinator.owner(c)) return false;
          }
          return true;
        },
        "the clusters split between both replicas",
        60_000,
        100,
      );
      assert.deepEqual(overlaps, [], "no cluster was ever seen engaged in both replicas");
      // replica-a stops gracefully: replica-b takes over everything.
      await a.stop();
      aStopped = true;
      await waitFor(() => b.coordinator.status().owned === CLUSTERS.length, "replica-b owning every cluster");
      assert.deepEqual([...b.target.engaged].sort(), CLUSTERS);
      assert.equal(b.coordinator.status().fenceViolations, 0);
    } finally {
      if (!aStopped) await a.stop();
      await b.stop();
    }
  }));

Deno.test("ShardCoordinator.disengage of an owned cluster disengages it and frees its fence", () =>
  inNamespace(async (home, ns, leases) => {
    const a = await replica(home, ns, "replica-a");
    try {
      await waitFor(() => a.coordinator.status().owned === CLUSTERS.length, "replica-a owning every cluster");
      await a.coordinator.disengage("c1");
      assert.equal(a.target.engaged.has("c1"), false);
      assert.equal((await leases.get(fenceLeaseName("g", "c1")))?.spec?.holderIdentity, "");
      const s = a.coordinator.status();
      assert.equal(s.registered, CLUSTERS.length - 1);
      assert.equal("c1" in s.clusters, false);
    } finally {
      await a.stop();
    }
  }));

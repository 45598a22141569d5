// Fault: an apiserver killed with -9 while objects are being created, down for 20 s, then restarted.
//
// The faulted cluster is a private two-replica control plane (FaultApiserver + a peer on the same etcd prefix): the
// hub talks to replica 1 through a counting TCP proxy; objects keep being created through replica 2 while replica 1
// is dead, so "objects created during the outage" exist and must get UUIDs once the hub reconnects.

import assert from "node:assert/strict";
import {
  type ClusterApi,
  UUID_V4,
  type UuidObserver,
  waitAllAssigned,
  waitFor,
} from "../../dev/support/cluster_api.ts";
import { FaultApiserver } from "../../dev/support/fault_cluster.ts";
import { faultScenario, recordFigure, secondsSince, StatusSampler } from "../support/fault_harness.ts";
import { FaultProxy } from "../../dev/support/fault_proxy.ts";

const OUTAGE_MS = 20_000;
/**
 * No hot loop, whatever the machine's speed: at most this many TCP connections (list/watch attempts) per second of
 * the outage window actually measured. The watcher's 800 ms doubling backoff makes about 5 attempts in 20 s, plus
 * the per-item backoff of reconciles queued at the kill; anything like a retry per 100 ms makes 10 per second.
 */
const MAX_CONNECTIONS_PER_SECOND = 2;
const MAX_ATTEMPTS_PER_SECOND = 1;
/**
 * Hang guard for the other clusters during the outage: the longest wait of one of their objects for its UUID. The
 * median measured is about 0.1-0.5 s; 10 s is ≥ 5× that, and still far below the 20 s of a cluster that waits for
 * the dead one.
 */
const OTHERS_HANG_GUARD_SECONDS = 10;

interface Created {
  name: string;
  at: number;
}

/** Creates one object every `everyMs` until `signal` aborts; failed creations are not recorded (nor retried). */
async function keepCreating(
  api: ClusterApi,
  ns: string,
  prefix: string,
  everyMs: number,
  signal: AbortSignal,
  out: Created[],
): Promise<void> {
  for (let i = 0; !signal.aborted; i++) {
    const name = `${prefix}-${i}`;
    const at = performance.now();
    try {
      await api.createUuid(ns, name);
      out.push({ name, at });
    } catch { /* counted as not created */ }
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** The longest time from creation to the observer first seeing a UUID, in seconds. */
function worstLatency(created: Created[], observer: UuidObserver): number {
  let worst = 0;
  for (const c of created) {
    const seen = observer.firstSeen.get(c.name);
    worst = Math.max(worst, ((seen ?? performance.now()) - c.at) / 1000);
  }
  return Math.round(worst * 10) / 10;
}

Deno.test("An apiserver killed with -9 for 20 s during creations is reconnected with backoff, no hot loop, every object gets one UUID, and the other clusters are served throughout", async () => {
  await using s = await faultScenario("outage", { local: ["prod", "staging"] });
  const { cleanup, f: f1, ns, local: { prod, staging } } = s;
  const f2 = cleanup.add(await FaultApiserver.start({ name: "outage-peer", peerOf: f1 }), (f) => f.destroy());
  const proxy = cleanup.add(FaultProxy.start({ targetPort: f1.port }), (p) => p.close());
  // Objects are created and observed through replica 2, which stays up while replica 1 is killed.
  const fault = cleanup.add(f2.api("outage"), (a) => a.close());
  const observers = { outage: s.observe(fault), prod: s.observe(prod), staging: s.observe(staging) };
  const kubeconfig = await s.kubeconfig([f1.context("outage", { server: proxy.url })]);
  const hub = s.startHub(["prod", "staging", "outage"], {
    extraKubeconfigs: [kubeconfig],
    namespaces: [ns],
    secrets: [f2.adminToken],
  });
  const sampler = cleanup.add(new StatusSampler(hub, 500), (s) => s.stop());
  const stopCreating = new AbortController();
  const created = { outage: [] as Created[], prod: [] as Created[], staging: [] as Created[] };
  const creators: Promise<void>[] = [];
  cleanup.defer(async () => {
    stopCreating.abort();
    await Promise.all(creators);
  });
  {
    await hub.waitReady(60_000);

    // Before: a steady stream of creations in the faulted cluster, and in the two others.
    creators.push(keepCreating(fault, ns, "o", 100, stopCreating.signal, created.outage));
    creators.push(keepCreating(prod, ns, "p", 400, stopCreating.signal, created.prod));
    creators.push(keepCreating(staging, ns, "s", 400, stopCreating.signal, created.staging));
    await waitFor(() => observers.outage.seen.size >= 10, "10 UUIDs in the faulted cluster before the kill", 30_000);

    // Kill replica 1 (the one the hub talks to) while creations go on through replica 2.
    const beforeKill = (await hub.get("/status")).body.clusters.outage.connectAttempts as number;
    const killedAt = performance.now();
    await f1.kill();
    const createdBeforeKill = created.outage.length;
    await new Promise((r) => setTimeout(r, OUTAGE_MS));
    const attemptsAtProxy = proxy.acceptedSince(killedAt);
    const duringStatus = (await hub.get("/status")).body.clusters.outage;
    const outageSeconds = secondsSince(killedAt);
    const attemptsInStatus = (duringStatus.connectAttempts as number) - beforeKill;
    const createdDuring = created.outage.length - createdBeforeKill;

    const restartAt = performance.now();
    await f1.restart();
    const restartedIn = secondsSince(restartAt);
    const readyAt = performance.now();
    await hub.waitStatus((s) => s.clusters.outage.state === "watching", 60_000, "outage watching again");
    const watchingIn = secondsSince(readyAt);
    // After: a few more seconds of creations, then stop and wait for every UUID.
    await new Promise((r) => setTimeout(r, 2_000));
    stopCreating.abort();
    await Promise.all(creators);
    const total = created.outage.length;
    await waitAllAssigned(fault, ns, total, 60_000);
    const recoveredIn = secondsSince(readyAt);
    const lastSeen = Math.max(...created.outage.map((c) => observers.outage.firstSeen.get(c.name) ?? Infinity));
    const lastUuidSeconds = Math.round((lastSeen - readyAt) / 100) / 10;
    for (const [name, api] of [["prod", prod], ["staging", staging]] as const) {
      await waitAllAssigned(api, ns, created[name].length, 30_000);
    }
    await new Promise((r) => setTimeout(r, 1_000));

    // Nothing lost, nothing changed, and each observer saw every object created in its cluster.
    for (const [name, observer] of Object.entries(observers)) {
      observer.assertStable(created[name as keyof typeof created].map((c) => c.name), name);
      assert.deepEqual(observer.partial, [], `${name}: a half-written status was visible`);
    }
    const finalUuids = await fault.uuidsOf(ns);
    assert.equal(finalUuids.size, total);
    assert.ok([...finalUuids.values()].every((u) => typeof u === "string" && UUID_V4.test(u)));
    assert.equal(new Set(finalUuids.values()).size, total, "UUIDs are unique");
    assert.ok(createdDuring >= 50, `objects were created during the outage (${createdDuring})`);

    // Backoff, no hot loop: a rate over the outage window measured (see MAX_CONNECTIONS_PER_SECOND).
    assert.ok(attemptsAtProxy >= 2, `the hub kept retrying during the outage (${attemptsAtProxy} connections)`);
    assert.ok(
      attemptsAtProxy <= MAX_CONNECTIONS_PER_SECOND * outageSeconds,
      `no hot loop: ${attemptsAtProxy} TCP connections in ${outageSeconds} s`,
    );
    assert.ok(
      attemptsInStatus <= MAX_ATTEMPTS_PER_SECOND * outageSeconds,
      `no hot loop: ${attemptsInStatus} watch/list attempts in ${outageSeconds} s`,
    );
    assert.ok(["unreachable", "connecting", "syncing"].includes(duringStatus.state), duringStatus.state);
    assert.match(String(duringStatus.lastError), /127\.0\.0\.1|connect|reach|closed|error/i);

    // The other clusters: watching in every sample during the outage, and each object served within seconds.
    const outageSamples = sampler.between(killedAt, restartAt);
    assert.ok(outageSamples.length >= 10, `sampled /status during the outage (${outageSamples.length})`);
    for (const c of ["prod", "staging"]) {
      const states = new Set(outageSamples.map((s) => s.status.clusters[c].state));
      assert.deepEqual([...states], ["watching"], `${c} states during the outage`);
      const health = new Set(outageSamples.map((s) => s.status.status));
      assert.ok(!health.has("failing"), `hub status during the outage: ${[...health]}`);
    }
    const duringOutage = (c: Created[]) => c.filter((x) => x.at >= killedAt && x.at <= restartAt);
    assert.ok(duringOutage(created.prod).length >= 20, "prod objects created during the outage");
    const prodWorst = worstLatency(duringOutage(created.prod), observers.prod);
    const stagingWorst = worstLatency(duringOutage(created.staging), observers.staging);
    assert.ok(prodWorst < OTHERS_HANG_GUARD_SECONDS, `hang guard: a prod object waited ${prodWorst} s in the outage`);
    assert.ok(
      stagingWorst < OTHERS_HANG_GUARD_SECONDS,
      `hang guard: a staging object waited ${stagingWorst} s in the outage`,
    );
    const readyz = await hub.get("/readyz");
    assert.equal(readyz.status, 200);

    await recordFigure({
      fault: "apiserver kill -9, 20 s outage",
      recoverSeconds: lastUuidSeconds,
      recoverPolledSeconds: recoveredIn,
      watchingAgainSeconds: watchingIn,
      apiserverRestartSeconds: restartedIn,
      lost: created.outage.filter((c) => !UUID_V4.test(String(finalUuids.get(c.name) ?? ""))).length,
      changed: Object.values(observers).reduce((n, o) => n + o.changed().length, 0),
      connectionsDuringOutage: attemptsAtProxy,
      listWatchAttemptsDuringOutage: attemptsInStatus,
      objects: total,
      createdDuringOutage: createdDuring,
      otherClustersWorstLatencySeconds: Math.max(prodWorst, stagingWorst),
    });
  }
});

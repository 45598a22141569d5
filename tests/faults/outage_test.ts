// Fault: an apiserver killed with -9 while objects are being created, down for 20 s, then restarted.
//
// The faulted cluster is a private two-replica control plane (FaultApiserver + a peer on the same etcd prefix): the
// hub talks to replica 1 through a counting TCP proxy; objects keep being created through replica 2 while replica 1
// is dead, so "objects created during the outage" exist and must get UUIDs once the hub reconnects.

import assert from "node:assert/strict";
import { ClusterApi, UUID_V4, type UuidObserver, waitAllAssigned, waitUntil } from "../support/cluster_api.ts";
import { FaultApiserver, kubeconfigText, tempDir } from "../support/fault_cluster.ts";
import {
  Cleanup,
  finishHub,
  localApi,
  localNamespace,
  recordFigure,
  secondsSince,
  startHub,
  StatusSampler,
} from "../support/fault_harness.ts";
import { FaultProxy } from "../support/fault_proxy.ts";

const OUTAGE_MS = 20_000;

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
  await using cleanup = new Cleanup();
  const f1 = cleanup.add(await FaultApiserver.start({ name: "outage" }), (f) => f.destroy());
  const f2 = cleanup.add(await FaultApiserver.start({ name: "outage-peer", peerOf: f1 }), (f) => f.destroy());
  const proxy = cleanup.add(FaultProxy.start({ targetPort: f1.port }), (p) => p.close());
  const dir = cleanup.add(await tempDir("outage"), (d) => d.remove());
  const local = await localNamespace(cleanup, "outage", ["prod", "staging"]);
  const ns = local.name;
  const fault = cleanup.add(f2.api("outage"), (a) => a.close());
  const prod = cleanup.add(localApi("prod"), (a) => a.close());
  const staging = cleanup.add(localApi("staging"), (a) => a.close());
  await fault.createNamespace(ns);
  const observers = { outage: fault.observe(ns), prod: prod.observe(ns), staging: staging.observe(ns) };
  for (const o of Object.values(observers)) cleanup.add(o, (x) => x.stop());
  const kubeconfig = await dir.write(
    "kubeconfig.yaml",
    kubeconfigText([f1.context("outage", { server: proxy.url })]),
  );
  const hub = startHub(["prod", "staging", "outage"], { extraKubeconfigs: [kubeconfig], namespaces: [ns] });
  cleanup.defer(() => finishHub(hub, "outage", [f1.adminToken, f2.adminToken]));
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
    await waitUntil("10 UUIDs in the faulted cluster before the kill", () => observers.outage.seen.size >= 10, 30_000);

    // Kill replica 1 (the one the hub talks to) while creations go on through replica 2.
    const beforeKill = (await hub.get("/status")).body.clusters.outage.connectAttempts as number;
    const killedAt = performance.now();
    await f1.kill();
    const createdBeforeKill = created.outage.length;
    await new Promise((r) => setTimeout(r, OUTAGE_MS));
    const attemptsAtProxy = proxy.acceptedSince(killedAt);
    const duringStatus = (await hub.get("/status")).body.clusters.outage;
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

    // Nothing lost, nothing changed.
    for (const [name, observer] of Object.entries(observers)) {
      assert.deepEqual(observer.changed(), [], `${name}: a UUID changed`);
      assert.deepEqual(observer.partial, [], `${name}: a half-written status was visible`);
    }
    const finalUuids = await fault.uuidsOf(ns);
    assert.equal(finalUuids.size, total);
    assert.ok([...finalUuids.values()].every((u) => typeof u === "string" && UUID_V4.test(u)));
    assert.equal(new Set(finalUuids.values()).size, total, "UUIDs are unique");
    assert.ok(createdDuring >= 50, `objects were created during the outage (${createdDuring})`);

    // Backoff, no hot loop: the watcher's 800 ms doubling backoff allows about 5 attempts in 20 s; reconciles of
    // objects queued at the kill add their own per-item backoff. Anything like a retry per 100 ms would be > 200.
    assert.ok(attemptsAtProxy >= 2, `the hub kept retrying during the outage (${attemptsAtProxy} connections)`);
    assert.ok(attemptsAtProxy <= 40, `no hot loop: ${attemptsAtProxy} TCP connections in ${OUTAGE_MS / 1000} s`);
    assert.ok(attemptsInStatus <= 20, `watch/list attempts during the outage: ${attemptsInStatus}`);
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
    assert.ok(prodWorst < 5, `prod objects waited up to ${prodWorst} s during the outage`);
    assert.ok(stagingWorst < 5, `staging objects waited up to ${stagingWorst} s during the outage`);
    const readyz = await hub.get("/readyz");
    assert.equal(readyz.status, 200);

    await recordFigure({
      fault: "apiserver kill -9, 20 s outage",
      recoverSeconds: lastUuidSeconds,
      recoverPolledSeconds: recoveredIn,
      watchingAgainSeconds: watchingIn,
      apiserverRestartSeconds: restartedIn,
      lost: 0,
      changed: 0,
      connectionsDuringOutage: attemptsAtProxy,
      listWatchAttemptsDuringOutage: attemptsInStatus,
      objects: total,
      createdDuringOutage: createdDuring,
      otherClustersWorstLatencySeconds: Math.max(prodWorst, stagingWorst),
    });
  }
});

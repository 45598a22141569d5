// Fault: clusters that cannot be reached when the hub starts: one refuses connections, one black-holes them (accepts
// and then never answers, like a firewall that drops packets). The other two must not wait for them.

import assert from "node:assert/strict";
import { names, UUID_V4, waitAllAssigned, waitFor } from "../../dev/support/cluster_api.ts";
import { faultScenario, recordFigure, secondsSince, waitStatus } from "../support/fault_harness.ts";
import { FaultProxy } from "../../dev/support/fault_proxy.ts";

/** Hang guard for prod and staging to sync beside the bad two: ≥ 5× the median measured (2-8 s, quiet to busy). */
const SYNC_HANG_GUARD_MS = 60_000;
/**
 * No hot loop, whatever the machine's speed: at most this many attempts per second of the window actually measured.
 * The hub's backoff (800 ms doubling) makes about 4 in the first 10 s; a loop without backoff makes dozens.
 */
const MAX_ATTEMPTS_PER_SECOND = 0.8;

Deno.test("Clusters refused or black-holed at start leave the others ready and working, /readyz names them, /healthz stays 200 degraded, and they are served once reachable without a restart", async () => {
  await using s = await faultScenario("unreach", { local: ["prod", "staging"] });
  const { cleanup, f, ns, api: fault, local: { prod, staging } } = s;
  const refused = cleanup.add(FaultProxy.start({ targetPort: f.port, mode: "refuse" }), (p) => p.close());
  const blackhole = cleanup.add(FaultProxy.start({ targetPort: f.port, mode: "blackhole" }), (p) => p.close());
  await fault.createUuids(ns, names("f", 10));
  const observer = s.observe();
  const kubeconfig = await s.kubeconfig([
    f.context("refused", { server: refused.url }),
    f.context("blackholed", { server: blackhole.url }),
  ]);
  const hub = s.startHub(["prod", "staging", "refused", "blackholed"], {
    extraKubeconfigs: [kubeconfig],
    namespaces: [ns],
    args: ["--request-timeout", "3"],
    label: "unreachable-start",
  });
  const startedAt = performance.now();

  // The reachable two get synced and serve objects while the others are down.
  await waitStatus(
    hub,
    "prod and staging synced",
    (x) => x.clusters.prod.synced && x.clusters.staging.synced,
    SYNC_HANG_GUARD_MS,
  );
  const syncedIn = secondsSince(startedAt);
  await prod.createUuids(ns, names("p", 5));
  await staging.createUuids(ns, names("s", 5));
  await waitAllAssigned(prod, ns, 5, 15_000);
  await waitAllAssigned(staging, ns, 5, 15_000);
  const down = await waitStatus(
    hub,
    "both bad clusters unreachable with an error",
    (x) =>
      x.clusters.refused.state === "unreachable" && x.clusters.blackholed.state === "unreachable" &&
      x.clusters.refused.lastError && x.clusters.blackholed.lastError,
    20_000,
  );
  assert.match(down.clusters.refused.lastError, /refused|cannot reach/i);
  assert.match(down.clusters.blackholed.lastError, /no complete response|within 3000 ms|timed? ?out/i);

  const readyz = await hub.get("/readyz");
  assert.equal(readyz.status, 503);
  assert.deepEqual([...readyz.body.notReady].sort(), ["blackholed", "refused"]);
  const healthz = await hub.get("/healthz");
  assert.equal(healthz.status, 200);
  assert.equal(healthz.body.status, "degraded");

  // Keep them unreachable a little longer, to count attempts: retried (at least twice each; the wait's timeout is a
  // hang guard) with backoff, not a hot loop (a rate over the window measured, not a count in a fixed time).
  await waitFor(
    async () =>
      (await hub.get("/status")).body.clusters.refused.connectAttempts >= 2 && blackhole.accepted >= 2 &&
      performance.now() - startedAt >= 10_000,
    "two attempts at each unreachable cluster, 10 s after the start",
    60_000,
  );
  const st = (await hub.get("/status")).body;
  const windowSeconds = secondsSince(startedAt);
  const refusedAttempts = st.clusters.refused.connectAttempts;
  const blackholeConnections = blackhole.accepted;
  // Each operator hosted pre-flights on its own backoff (by default the Uuid and the Mirror operators).
  const loops = Object.keys(st.clusters.refused.operators).length;
  assert.ok(loops >= 1, JSON.stringify(st.clusters.refused));
  const allowed = Math.ceil(MAX_ATTEMPTS_PER_SECOND * windowSeconds * loops);
  assert.ok(refusedAttempts <= allowed, `refused: ${refusedAttempts} attempts in ${windowSeconds} s, ${loops} loops`);
  assert.ok(
    blackholeConnections <= allowed,
    `black-holed: ${blackholeConnections} connections in ${windowSeconds} s, ${loops} loops`,
  );
  assert.ok(blackhole.open >= 1, "the black-holed connections are still open at the proxy");

  // The network heals: both are served without a restart.
  const healedAt = performance.now();
  refused.setMode("forward");
  blackhole.setMode("forward");
  await hub.waitReady(45_000);
  const readyIn = secondsSince(healedAt);
  const after = await waitAllAssigned(fault, ns, 10, 30_000);
  const recoveredIn = secondsSince(healedAt);
  observer.assertStable(after.keys());
  const ok = await waitStatus(hub, "status ok", (x) => x.status === "ok", 15_000);
  assert.equal(ok.clusters.refused.objects, 10);
  assert.equal(ok.clusters.blackholed.objects, 10);
  assert.equal((await hub.get("/readyz")).status, 200);
  assert.equal(hub.exited, undefined, "the hub was never restarted");

  await recordFigure({
    fault: "unreachable at start (refused + black-holed), healed after 10 s",
    recoverSeconds: recoveredIn,
    readySeconds: readyIn,
    othersSyncedSeconds: syncedIn,
    lost: names("f", 10).filter((n) => !UUID_V4.test(after.get(n) ?? "")).length,
    changed: observer.changed().length,
    connectionsDuringOutage:
      `refused: ${refusedAttempts} attempts (/status); black-holed: ${blackholeConnections} TCP, in ${windowSeconds} s`,
  });
});

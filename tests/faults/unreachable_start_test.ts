// Fault: clusters that cannot be reached when the hub starts: one refuses connections, one black-holes them (accepts
// and then never answers, like a firewall that drops packets). The other two must not wait for them.

import assert from "node:assert/strict";
import { names, waitAllAssigned } from "../support/cluster_api.ts";
import { FaultApiserver, kubeconfigText, tempDir } from "../support/fault_cluster.ts";
import {
  Cleanup,
  finishHub,
  localApi,
  localNamespace,
  recordFigure,
  secondsSince,
  startHub,
  waitStatus,
} from "../support/fault_harness.ts";
import { FaultProxy } from "../support/fault_proxy.ts";

Deno.test("Clusters refused or black-holed at start leave the others ready and working, /readyz names them, /healthz stays 200 degraded, and they are served once reachable without a restart", async () => {
  await using cleanup = new Cleanup();
  const f = cleanup.add(await FaultApiserver.start({ name: "unreach" }), (x) => x.destroy());
  const refused = cleanup.add(FaultProxy.start({ targetPort: f.port, mode: "refuse" }), (p) => p.close());
  const blackhole = cleanup.add(FaultProxy.start({ targetPort: f.port, mode: "blackhole" }), (p) => p.close());
  const dir = cleanup.add(await tempDir("unreach"), (d) => d.remove());
  const local = await localNamespace(cleanup, "unreach", ["prod", "staging"]);
  const ns = local.name;
  const fault = cleanup.add(f.api("unreach"), (a) => a.close());
  const prod = cleanup.add(localApi("prod"), (a) => a.close());
  const staging = cleanup.add(localApi("staging"), (a) => a.close());
  await fault.createNamespace(ns);
  await fault.createUuids(ns, names("f", 10));
  const kubeconfig = await dir.write(
    "kubeconfig.yaml",
    kubeconfigText([
      f.context("refused", { server: refused.url }),
      f.context("blackholed", { server: blackhole.url }),
    ]),
  );
  const hub = startHub(["prod", "staging", "refused", "blackholed"], {
    extraKubeconfigs: [kubeconfig],
    namespaces: [ns],
    args: ["--request-timeout", "3"],
  });
  cleanup.defer(() => finishHub(hub, "unreachable-start", [f.adminToken]));
  const startedAt = performance.now();

  // The reachable two get synced and serve objects while the others are down.
  await waitStatus(hub, "prod and staging synced", (s) => s.clusters.prod.synced && s.clusters.staging.synced, 30_000);
  const syncedIn = secondsSince(startedAt);
  await prod.createUuids(ns, names("p", 5));
  await staging.createUuids(ns, names("s", 5));
  await waitAllAssigned(prod, ns, 5, 15_000);
  await waitAllAssigned(staging, ns, 5, 15_000);
  const down = await waitStatus(
    hub,
    "both bad clusters unreachable with an error",
    (s) =>
      s.clusters.refused.state === "unreachable" && s.clusters.blackholed.state === "unreachable" &&
      s.clusters.refused.lastError && s.clusters.blackholed.lastError,
    20_000,
  );
  assert.match(down.clusters.refused.lastError, /refused|cannot reach/i);
  assert.match(down.clusters.blackholed.lastError, /no complete response|within 3000 ms|timed? ?out/i);
  assert.ok(syncedIn < 10, `prod and staging were synced ${syncedIn} s after start`);

  const readyz = await hub.get("/readyz");
  assert.equal(readyz.status, 503);
  assert.deepEqual([...readyz.body.notReady].sort(), ["blackholed", "refused"]);
  const healthz = await hub.get("/healthz");
  assert.equal(healthz.status, 200);
  assert.equal(healthz.body.status, "degraded");

  // Keep them unreachable a little longer, to count attempts: backoff, not a hot loop.
  await new Promise((r) => setTimeout(r, Math.max(0, 10_000 - (performance.now() - startedAt))));
  const s = (await hub.get("/status")).body;
  const refusedAttempts = s.clusters.refused.connectAttempts;
  const blackholeConnections = blackhole.accepted;
  assert.ok(refusedAttempts >= 2 && refusedAttempts <= 8, `refused: ${refusedAttempts} attempts in 10 s`);
  assert.ok(
    blackholeConnections >= 2 && blackholeConnections <= 8,
    `black-holed: ${blackholeConnections} connections in 10 s`,
  );
  assert.ok(blackhole.open >= 1, "the black-holed connections are still open at the proxy");

  // The network heals: both are served without a restart.
  const healedAt = performance.now();
  refused.setMode("forward");
  blackhole.setMode("forward");
  await hub.waitReady(45_000);
  const readyIn = secondsSince(healedAt);
  await waitAllAssigned(fault, ns, 10, 30_000);
  const recoveredIn = secondsSince(healedAt);
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
    lost: 0,
    changed: 0,
    connectionsDuringOutage: `refused: ${refusedAttempts} attempts (/status); black-holed: ${blackholeConnections} TCP`,
  });
});

// Fault: a half-open connection. The proxy stops carrying bytes on every open connection but keeps them open, the
// way a dead NAT entry or a partitioned load balancer leaves a TCP connection: no FIN, no RST, just silence.

import assert from "node:assert/strict";
import { names, UUID_V4, waitAllAssigned } from "../../dev/support/cluster_api.ts";
import { faultScenario, recordFigure, secondsSince, StatusSampler, waitStatus } from "../support/fault_harness.ts";
import { FaultProxy } from "../../dev/support/fault_proxy.ts";

/** Hang guard for noticing the stall: the watchdog fires after 5 s idle; noticed in about 4-7 s (median). */
const NOTICE_HANG_GUARD_MS = 60_000;

Deno.test("A half-open watch connection is noticed by the inactivity watchdog, shown in health while it lasts, and reopened without losing an event", async () => {
  await using s = await faultScenario("stall", { local: ["prod"] });
  const { cleanup, f, ns, api: fault, local: { prod } } = s;
  const proxy = cleanup.add(FaultProxy.start({ targetPort: f.port }), (p) => p.close());
  const observer = s.observe();
  const prodObserver = s.observe(prod);
  const kubeconfig = await s.kubeconfig([f.context("stall", { server: proxy.url })]);
  const hub = s.startHub(["prod", "stall"], {
    extraKubeconfigs: [kubeconfig],
    namespaces: [ns],
    args: ["--watch-idle-timeout", "5", "--request-timeout", "5"],
    label: "half-open",
  });
  const sampler = cleanup.add(new StatusSampler(hub, 250), (s) => s.stop());

  await hub.waitReady(60_000);
  await fault.createUuids(ns, names("before", 10));
  const before = await waitAllAssigned(fault, ns, 10, 30_000);
  const abortsBefore = (await hub.get("/status")).body.clusters.stall.watchdogAborts as number;

  // Freeze every open connection; new ones are forwarded normally.
  const stalledAt = performance.now();
  const frozen = proxy.stall();
  assert.ok(frozen >= 1, "the hub had a connection open to stall");
  // Events the hub must not lose: creations, a deletion and a status edit, all made while its stream is silent.
  await fault.createUuids(ns, names("during", 10));
  await fault.deleteUuid(ns, "before-0");
  await prod.createUuids(ns, names("prod", 5));

  // Health shows the stall: the event age grows past the idle timeout, or the state leaves "watching".
  await waitStatus(
    hub,
    "the stall in /status",
    (x) => x.clusters.stall.lastEventAgeSeconds >= 4 || x.clusters.stall.state !== "watching",
    NOTICE_HANG_GUARD_MS,
  );
  const noticedIn = secondsSince(stalledAt);
  const all = await waitAllAssigned(fault, ns, 19, 60_000);
  const recoveredIn = secondsSince(stalledAt);
  await waitStatus(
    hub,
    "the deleted object gone from the hub's store",
    (s) => s.clusters.stall.objects === 19 && s.clusters.stall.state === "watching",
    30_000,
  );
  const status = (await hub.get("/status")).body;
  await waitAllAssigned(prod, ns, 5, 10_000);

  // The watchdog fired and a new connection carried the stream.
  assert.ok(status.clusters.stall.watchdogAborts > abortsBefore, JSON.stringify(status.clusters.stall));
  const connectionsAfter = proxy.acceptedSince(stalledAt);
  assert.ok(connectionsAfter >= 1, "the hub opened a new connection");
  // No event lost, no UUID changed.
  for (const [name, uuid] of before) if (name !== "before-0") assert.equal(all.get(name), uuid, `${name} changed`);
  assert.ok(!all.has("before-0"), "the object deleted during the stall is gone");
  assert.ok([...all.values()].every((u) => UUID_V4.test(u)));
  observer.assertStable(all.keys());
  assert.deepEqual(observer.partial, []);
  prodObserver.assertStable(names("prod", 5));
  // While it lasted, /status said so (and the hub stayed live: stall ≠ wedged).
  const during = sampler.between(stalledAt, stalledAt + noticedIn * 1000 + 2_000).map((s) => s.status);
  assert.ok(during.length > 0);
  assert.ok(during.every((x) => x.status !== "failing"), "a stalled cluster does not fail liveness");

  await recordFigure({
    fault: "half-open connection (stall), --watch-idle-timeout 5",
    noticedSeconds: noticedIn,
    recoverSeconds: recoveredIn,
    lost: [...before.keys(), ...names("during", 10)].filter((n) => n !== "before-0" && !all.has(n)).length,
    changed: observer.changed().length + prodObserver.changed().length,
    watchdogAborts: status.clusters.stall.watchdogAborts - abortsBefore,
    connectionsDuringOutage: connectionsAfter,
  });
});

// Faults of the hub itself: SIGKILL in the middle of a burst, a second writer that wins races, and reconciles that
// throw or hang. The faulted cluster is a private apiserver; the intercepting proxy acts on the hub's status writes.

import assert from "node:assert/strict";
import { names, UUID_V4, waitAllAssigned, waitUntil } from "../support/cluster_api.ts";
import { FaultApiserver, kubeconfigText, tempDir } from "../support/fault_cluster.ts";
import { Cleanup, finishHub, recordFigure, secondsSince, startHub } from "../support/fault_harness.ts";
import { InterceptProxy, statusResponse } from "../support/intercept_proxy.ts";
const statusWriteOf = (path: string) => path.match(/\/namespaces\/[^/]+\/uuid\/([^/]+)\/status$/)?.[1];

async function faultCluster(cleanup: Cleanup, label: string, intercept: boolean) {
  const f = cleanup.add(await FaultApiserver.start({ name: label }), (x) => x.destroy());
  const dir = cleanup.add(await tempDir(label), (d) => d.remove());
  const api = cleanup.add(f.api(label), (a) => a.close());
  let proxy: InterceptProxy | undefined;
  if (intercept) {
    proxy = cleanup.add(
      await InterceptProxy.inFrontOf(f),
      (p) => p.close(),
    );
  }
  const kubeconfig = await dir.write(
    "kubeconfig.yaml",
    kubeconfigText([f.context(label, proxy ? { server: proxy.url } : {})]),
  );
  const ns = `${label}-ns`;
  await api.createNamespace(ns);
  const observer = cleanup.add(api.observe(ns), (o) => o.stop());
  return { f, api, proxy: proxy!, kubeconfig, ns, observer };
}

Deno.test("SIGKILL of the hub in the middle of a burst of 2,000 creations, then a restart, leaves every object with exactly one UUID and none changed", async () => {
  await using cleanup = new Cleanup();
  const { f, api, kubeconfig, ns, observer } = await faultCluster(cleanup, "crash", false);
  let hub = startHub(["crash"], { extraKubeconfigs: [kubeconfig] });
  cleanup.defer(() => finishHub(hub, "hub-sigkill-restarted", [f.adminToken]));
  await hub.waitReady(60_000);
  const burstAt = performance.now();
  const creating = api.createUuids(ns, names("k", 2000), 24);
  await waitUntil("300 UUIDs before the kill", () => observer.seen.size >= 300, 60_000, 50);
  await hub.kill();
  const killed = await finishHub(hub, "hub-sigkill", [f.adminToken]);
  assert.equal(killed.code, 137, "the hub died of SIGKILL");
  const atKill = await api.uuidsOf(ns);
  await creating;
  const restartAt = performance.now();
  hub = startHub(["crash"], { extraKubeconfigs: [kubeconfig] });
  const after = await waitAllAssigned(api, ns, 2000, 120_000);
  const recoveredIn = secondsSince(restartAt);
  await new Promise((r) => setTimeout(r, 1_000));
  for (const [name, uuid] of atKill) if (uuid) assert.equal(after.get(name), uuid, `${name} changed`);
  assert.ok([...after.values()].every((u) => UUID_V4.test(u)));
  assert.equal(new Set(after.values()).size, 2000, "UUIDs are unique");
  assert.deepEqual(observer.changed(), []);
  assert.deepEqual(observer.partial, [], "no half-written status was ever visible");
  const assignedAtKill = [...atKill.values()].filter(Boolean).length;
  await recordFigure({
    fault: "hub SIGKILL mid-burst of 2,000, restart",
    recoverSeconds: recoveredIn,
    burstSeconds: secondsSince(burstAt),
    assignedAtKill,
    lost: 0,
    changed: 0,
    connectionsDuringOutage: "n/a",
  });
});

Deno.test("Status write conflicts caused by a second writer are retried: the hub re-reads, keeps a UUID the other writer set, and assigns one otherwise", async () => {
  await using cleanup = new Cleanup();
  const { f, api, proxy, kubeconfig, ns, observer } = await faultCluster(cleanup, "conflict", true);
  const otherUuid = crypto.randomUUID();
  const raced = new Set<string>();
  proxy.hook = async (req) => {
    const name = req.method === "PATCH" ? statusWriteOf(req.path) : undefined;
    if (!name || raced.has(name)) return undefined;
    raced.add(name);
    if (name.startsWith("label-")) {
      // Someone edits the object between the hub's read and its write: a resourceVersion conflict.
      await api.request("PATCH", `/apis/demo.operator/v1/namespaces/${ns}/uuid/${name}`, {
        metadata: { labels: { touched: "by-another-writer" } },
      });
    } else if (name.startsWith("replica-")) {
      // Another replica assigns a UUID first.
      await api.patchStatus(ns, name, { uuid: otherUuid, state: "Ok", message: "assigned by another replica" });
    }
    return undefined;
  };
  const hub = startHub(["conflict"], { extraKubeconfigs: [kubeconfig] });
  cleanup.defer(() => finishHub(hub, "hub-conflicts", [f.adminToken]));
  await hub.waitReady(60_000);
  await api.createUuids(ns, [...names("label", 5), ...names("replica", 5)]);
  const done = await waitAllAssigned(api, ns, 10, 30_000);
  await new Promise((r) => setTimeout(r, 1_000));

  const conflicts = proxy.seen((r) => r.method === "PATCH" && r.status === 409);
  assert.ok(conflicts.length >= 10, `the apiserver answered 409 to the hub's racing writes (${conflicts.length})`);
  assert.ok(conflicts.every((r) => !r.synthetic));
  for (const name of names("replica", 5)) assert.equal(done.get(name), otherUuid, `${name} kept the other UUID`);
  for (const name of names("label", 5)) {
    assert.ok(UUID_V4.test(done.get(name)!));
    assert.equal((await api.getUuid(ns, name)).metadata.labels?.touched, "by-another-writer", "the edit survived");
  }
  assert.deepEqual(observer.changed(), []);
  // After a conflict the hub wrote at most once more per object.
  const okWrites = proxy.seen((r) => r.method === "PATCH" && r.status === 200);
  assert.ok(okWrites.length <= 5, `successful status writes: ${okWrites.length} (only the label-* objects need one)`);
  await recordFigure({
    fault: "write conflicts from a second writer",
    recoverSeconds: "immediate (re-read + rewrite)",
    conflicts: conflicts.length,
    lost: 0,
    changed: 0,
    connectionsDuringOutage: "n/a",
  });
});

Deno.test("A reconcile that throws is retried with growing backoff and a reconcile that hangs past --reconcile-timeout is abandoned and retried, while the queue keeps moving", async () => {
  await using cleanup = new Cleanup();
  const { f, api, proxy, kubeconfig, ns, observer } = await faultCluster(cleanup, "stuck", true);
  const attempts: Record<string, number[]> = { "throw-0": [], "hang-0": [] };
  const abandoned: number[] = [];
  proxy.hook = async (req) => {
    const name = req.method === "PATCH" ? statusWriteOf(req.path) : undefined;
    if (!name || !(name in attempts)) return undefined;
    attempts[name].push(performance.now());
    if (name === "throw-0" && attempts[name].length <= 8) {
      return statusResponse(500, "InternalError", "etcdserver: leader changed");
    }
    if (name === "hang-0" && attempts[name].length <= 2) {
      // Never answers; the hub must give up on its own.
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 30_000);
        req.signal.addEventListener("abort", () => {
          abandoned.push(performance.now());
          clearTimeout(timer);
          resolve();
        }, { once: true });
      });
      return statusResponse(504, "Timeout", "held by the test");
    }
    return undefined;
  };
  const hub = startHub(["stuck"], {
    extraKubeconfigs: [kubeconfig],
    args: ["--reconcile-timeout", "2", "--concurrency", "2"],
  });
  cleanup.defer(() => finishHub(hub, "hub-stuck-reconciles", [f.adminToken]));
  await hub.waitReady(60_000);
  const startedAt = performance.now();
  await api.createUuids(ns, ["hang-0", "throw-0"]);
  await new Promise((r) => setTimeout(r, 200));
  await api.createUuids(ns, names("ok", 30));

  // The queue keeps moving: 30 ordinary objects are done while hang-0 is still failing.
  await waitUntil(
    "the 30 ordinary objects assigned",
    async () => {
      const m = await api.uuidsOf(ns);
      return names("ok", 30).every((n) => typeof m.get(n) === "string");
    },
    30_000,
    100,
  );
  const othersDoneIn = secondsSince(startedAt);
  const hangAttemptsWhenOthersDone = attempts["hang-0"].length;
  await waitAllAssigned(api, ns, 32, 60_000);
  const allDoneIn = secondsSince(startedAt);

  // Throw: 8 failures, then success; the gaps between attempts grow (per-item exponential backoff).
  const t = attempts["throw-0"];
  assert.ok(t.length >= 9, `throw-0 attempts: ${t.length}`);
  const gaps = t.slice(1).map((x, i) => x - t[i]);
  assert.ok(gaps[gaps.length - 1] > 4 * Math.max(1, gaps[0]), `gaps grow: ${gaps.map(Math.round).join(", ")} ms`);
  assert.ok(t[t.length - 1] - t[0] < 20_000, "and stay bounded");
  // Hang: each held attempt was abandoned by the hub after about 2 s, then retried.
  const h = attempts["hang-0"];
  assert.ok(h.length >= 3, `hang-0 attempts: ${h.length}`);
  assert.ok(abandoned.length >= 2, `the hub cancelled its hung requests (${abandoned.length})`);
  for (let i = 0; i < 2; i++) {
    const heldFor = abandoned[i] - h[i];
    assert.ok(heldFor > 1_500 && heldFor < 4_000, `attempt ${i} held for ${Math.round(heldFor)} ms`);
  }
  assert.ok(othersDoneIn < 8, `the others were done ${othersDoneIn} s after creation`);
  assert.ok(hangAttemptsWhenOthersDone <= 3, "the others did not wait for hang-0 to succeed");
  assert.deepEqual(observer.changed(), []);
  const metrics = (await hub.get("/metrics")).text;
  assert.match(metrics, /controller_runtime_reconcile_errors_total\{[^}]*cluster="stuck"[^}]*\} ([1-9]\d*)/);
  const status = (await hub.get("/status")).body;
  assert.notEqual(status.status, "failing");
  assert.equal(status.controller.wedged, false);
  await recordFigure({
    fault: "reconcile throws 8x / hangs 2x past --reconcile-timeout 2",
    recoverSeconds: allDoneIn,
    othersDoneSeconds: othersDoneIn,
    throwGapsMs: gaps.map(Math.round),
    lost: 0,
    changed: 0,
    connectionsDuringOutage: "n/a",
  });
});

// Faults of the hub itself: SIGKILL in the middle of a burst, a second writer that wins races, and reconciles that
// throw or hang. The faulted cluster is a private apiserver; the intercepting proxy acts on the hub's status writes.

import assert from "node:assert/strict";
import { names, UUID_V4, waitAllAssigned, waitFor } from "../../dev/support/cluster_api.ts";
import { faultScenario, finishHub, recordFigure, secondsSince, startHub } from "../support/fault_harness.ts";
import { InterceptProxy, statusResponse } from "../support/intercept_proxy.ts";
/**
 * Hang guards, each ≥ 5× the median measured on a quiet machine: the 30 ordinary objects are done ~4 s after their
 * creation, the 9 attempts of throw-0 span ~3 s, and the hub abandons a hung write ~2 s after sending it.
 */
const OTHERS_HANG_GUARD_MS = 60_000;
const THROW_SPAN_HANG_GUARD_MS = 30_000;
const ABANDON_HANG_GUARD_MS = 15_000;
const statusWriteOf = (path: string) => path.match(/\/namespaces\/[^/]+\/uuid\/([^/]+)\/status$/)?.[1];

/** A fault cluster observed from the start, optionally behind an intercepting proxy. */
async function hubFaultScenario(label: string, intercept: boolean) {
  const s = await faultScenario(label);
  const proxy = intercept ? s.cleanup.add(await InterceptProxy.inFrontOf(s.f), (p) => p.close()) : undefined;
  const kubeconfig = await s.kubeconfig([s.f.context(label, proxy ? { server: proxy.url } : {})]);
  return Object.assign(s, { proxy: proxy!, kubeconfig, observer: s.observe() });
}

Deno.test("SIGKILL of the hub in the middle of a burst of 2,000 creations, then a restart, leaves every object with exactly one UUID and none changed", async () => {
  await using s = await hubFaultScenario("crash", false);
  const { f, api, kubeconfig, ns, observer } = s;
  let hub = startHub(["crash"], { extraKubeconfigs: [kubeconfig] });
  s.cleanup.defer(() => finishHub(hub, "hub-sigkill-restarted", [f.adminToken]));
  await hub.waitReady(60_000);
  const burstAt = performance.now();
  const creating = api.createUuids(ns, names("k", 2000), 24);
  await waitFor(() => observer.seen.size >= 300, "300 UUIDs before the kill", 60_000, 50);
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
  observer.assertStable(after.keys());
  assert.deepEqual(observer.partial, [], "no half-written status was ever visible");
  const assignedAtKill = [...atKill.values()].filter(Boolean).length;
  await recordFigure({
    fault: "hub SIGKILL mid-burst of 2,000, restart",
    recoverSeconds: recoveredIn,
    burstSeconds: secondsSince(burstAt),
    assignedAtKill,
    lost: names("k", 2000).filter((n) => !after.get(n)).length,
    changed: observer.changed().length,
    connectionsDuringOutage: "n/a",
  });
});

Deno.test("Status write conflicts caused by a second writer are retried: the hub re-reads, keeps a UUID the other writer set, and assigns one otherwise", async () => {
  await using s = await hubFaultScenario("conflict", true);
  const { api, proxy, kubeconfig, ns, observer } = s;
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
  const hub = s.startHub(["conflict"], { extraKubeconfigs: [kubeconfig], label: "hub-conflicts" });
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
  observer.assertStable(done.keys());
  // After a conflict the hub wrote at most once more per object.
  const okWrites = proxy.seen((r) => r.method === "PATCH" && r.status === 200);
  assert.ok(okWrites.length <= 5, `successful status writes: ${okWrites.length} (only the label-* objects need one)`);
  await recordFigure({
    fault: "write conflicts from a second writer",
    recoverSeconds: "immediate (re-read + rewrite)",
    conflicts: conflicts.length,
    lost: [...done.values()].filter((u) => !UUID_V4.test(u)).length,
    changed: observer.changed().length,
    connectionsDuringOutage: "n/a",
  });
});

Deno.test("A reconcile that throws is retried with growing backoff and a reconcile that hangs past --reconcile-timeout is abandoned and retried, while the queue keeps moving", async () => {
  await using s = await hubFaultScenario("stuck", true);
  const { api, proxy, kubeconfig, ns, observer } = s;
  const attempts: Record<string, number[]> = { "throw-0": [], "hang-0": [] };
  const abandoned: number[] = [];
  // hang-0's status writes hang (at least twice) until the 30 ordinary objects are all done: the queue can only
  // finish them by moving past it, whatever the machine's speed.
  let othersDone = false;
  proxy.hook = async (req) => {
    const name = req.method === "PATCH" ? statusWriteOf(req.path) : undefined;
    if (!name || !(name in attempts)) return undefined;
    attempts[name].push(performance.now());
    if (name === "throw-0" && attempts[name].length <= 8) {
      return statusResponse(500, "InternalError", "etcdserver: leader changed");
    }
    if (name === "hang-0" && (attempts[name].length <= 2 || !othersDone)) {
      // Never answers; the hub must give up on its own (the timer only ends a request the hub never abandons, after
      // longer than the hang guard of the 30 others, so that a hub that waits for hang-0 fails that guard).
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 2 * OTHERS_HANG_GUARD_MS);
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
  const hub = s.startHub(["stuck"], {
    extraKubeconfigs: [kubeconfig],
    args: ["--reconcile-timeout", "2", "--concurrency", "2"],
    label: "hub-stuck-reconciles",
  });
  await hub.waitReady(60_000);
  const startedAt = performance.now();
  await api.createUuids(ns, ["hang-0", "throw-0"]);
  await new Promise((r) => setTimeout(r, 200));
  await api.createUuids(ns, names("ok", 30));

  // The queue keeps moving: the 30 ordinary objects get done while every write of hang-0 is held (the hook lets
  // none through before), so the wait ends only if the queue moves past it; its timeout is a hang guard.
  await waitFor(
    async () => {
      const m = await api.uuidsOf(ns);
      return names("ok", 30).every((n) => typeof m.get(n) === "string");
    },
    "the 30 ordinary objects assigned while hang-0 hangs",
    OTHERS_HANG_GUARD_MS,
    100,
  );
  const othersDoneIn = secondsSince(startedAt);
  const hangAttemptsWhenOthersDone = attempts["hang-0"].length;
  othersDone = true;
  await waitAllAssigned(api, ns, 32, 60_000);
  const allDoneIn = secondsSince(startedAt);

  // Throw: 8 failures, then success; the gaps between attempts grow (per-item exponential backoff).
  const t = attempts["throw-0"];
  assert.ok(t.length >= 9, `throw-0 attempts: ${t.length}`);
  const gaps = t.slice(1).map((x, i) => x - t[i]);
  // Before the 9th attempt the hub waited out the 8th failure's per-item backoff, 5 ms × 2^7 = 640 ms: a lower bound,
  // which a slow machine can only exceed (a fixed or missing backoff retries within milliseconds).
  const eighthBackoffMs = 5 * 2 ** 7;
  assert.ok(gaps[7] >= 0.95 * eighthBackoffMs, `gaps grow: ${gaps.map(Math.round).join(", ")} ms`);
  const throwSpanMs = Math.round(t[t.length - 1] - t[0]);
  assert.ok(throwSpanMs < THROW_SPAN_HANG_GUARD_MS, `hang guard: the 9 attempts took ${throwSpanMs} ms`);
  // Hang: each held attempt was abandoned by the hub after about 2 s, then retried.
  const h = attempts["hang-0"];
  assert.ok(h.length >= 3, `hang-0 attempts: ${h.length}`);
  assert.ok(abandoned.length >= 2, `the hub cancelled its hung requests (${abandoned.length})`);
  const heldMs = abandoned.slice(0, 2).map((at, i) => Math.round(at - h[i]));
  for (const [i, held] of heldMs.entries()) {
    assert.ok(held > 1_500, `attempt ${i} was abandoned after ${held} ms, before the 2 s --reconcile-timeout`);
    assert.ok(held < ABANDON_HANG_GUARD_MS, `hang guard: attempt ${i} held for ${held} ms`);
  }
  observer.assertStable(names("ok", 30).concat("hang-0", "throw-0"));
  const metrics = (await hub.get("/metrics")).text;
  assert.match(metrics, /controller_runtime_reconcile_errors_total\{[^}]*cluster="stuck"[^}]*\} ([1-9]\d*)/);
  const status = (await hub.get("/status")).body;
  assert.notEqual(status.status, "failing");
  assert.equal(status.controller.wedged, false);
  await recordFigure({
    fault: "reconcile throws 8x / hangs 2x past --reconcile-timeout 2",
    recoverSeconds: allDoneIn,
    othersDoneSeconds: othersDoneIn,
    hangAttemptsWhenOthersDone,
    abandonedAfterMs: heldMs,
    throwGapsMs: gaps.map(Math.round),
    throwSpanMs,
    lost: names("ok", 30).concat("hang-0", "throw-0").filter((n) => !observer.seen.has(n)).length,
    changed: observer.changed().length,
    connectionsDuringOutage: "n/a",
  });
});

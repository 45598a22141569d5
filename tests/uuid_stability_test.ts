// End-to-end: a UUID, once written, never changes: across restarts, SIGKILL mid-burst and two hubs at once.
//
// Every test here counts the Uuid writes an apiserver saw (apiserver_request_total, cluster-wide), so each runs on
// private kube-apiservers of its own (dev/support/fault_cluster.ts: the same binary and flags as the local clusters,
// on their etcd): no other test file running at the same time can write there.

import assert from "node:assert/strict";
import { HubProcess } from "../dev/support/hub_process.ts";
import { FaultApiserver } from "../dev/support/fault_cluster.ts";
import { assertObservedStable } from "./support/observed.ts";
import {
  type ClusterApi,
  names,
  UUID_V4,
  type UuidObserver,
  waitAllAssigned as waitAllAssignedIn,
  waitFor,
} from "../dev/support/cluster_api.ts";

/** A private apiserver named `name`, with a namespace `ns` in it, and an admin client; `destroy` removes them all. */
async function privateCluster(name: string, ns: string): Promise<{ f: FaultApiserver; api: ClusterApi }> {
  const f = await FaultApiserver.start({ name });
  const api = f.api();
  try {
    await api.createNamespace(ns);
  } catch (err) {
    api.close();
    await f.destroy();
    throw err;
  }
  return { f, api };
}

/** Starts the hub on private apiservers `fs`, through their admin kubeconfigs. */
function hubOn(fs: FaultApiserver[]): HubProcess {
  return HubProcess.start({ clusters: fs.map((f) => f.name), kubeconfigs: fs.map((f) => f.adminKubeconfig) });
}

const waitAllAssigned = (api: ClusterApi, namespace: string, count: number, timeoutMs = 120_000) =>
  waitAllAssignedIn(api, namespace, count, timeoutMs);

/** The hub under test on a private "prod", one fresh namespace, and an independent watch of every UUID it shows. */
interface OnProd {
  ns: string;
  api: ClusterApi;
  history: UuidObserver;
  /** The hub running now. */
  hub(): HubProcess;
  /** Starts a new hub (the old one must have been stopped) and returns it. */
  restart(): HubProcess;
}

/** Runs `fn` with a hub on a private "prod" and tears everything down afterwards, whatever happened. */
async function onProd(kind: string, fn: (t: OnProd) => Promise<void>): Promise<void> {
  const ns = kind;
  const { f, api } = await privateCluster(`${kind}-prod`, ns);
  const history = api.observe(ns);
  let hub = hubOn([f]);
  try {
    await fn({
      ns,
      api,
      history,
      hub: () => hub,
      restart: () => (hub = hubOn([f])),
    });
  } finally {
    await hub.kill();
    await history.stop();
    api.close();
    await f.destroy();
  }
}

Deno.test("A hub restart changes no UUID and writes nothing for objects already done", async () => {
  await onProd("restart", async ({ ns, api, history, hub, restart }) => {
    await hub().waitReady();
    await api.createUuids(ns, names("r", 30));
    const before = await waitAllAssigned(api, ns, 30);
    assert.equal((await hub().stop()).code, 0, hub().tail());
    const writes = await api.uuidWrites();
    const again = restart();
    await again.waitReady();
    // The restarted hub lists all 30 and reconciles each once; give it time to (wrongly) write.
    await waitFor(async () => (await again.get("/status")).body.controller.queued === 0, "queue drained");
    await new Promise((r) => setTimeout(r, 1500));
    assert.deepEqual(await api.uuidsOf(ns), before);
    assert.equal(await api.uuidWrites() - writes, 0, "writes after restart");
    // The independent watch saw all 30 UUIDs, without error, none of them twice.
    await assertObservedStable(history, before.keys());
  });
});

Deno.test("SIGKILL of the hub in the middle of a burst of 500 creations leaves every object with exactly one UUID", async () => {
  await onProd("sigkill", async ({ ns, api, history, hub, restart }) => {
    await hub().waitReady();
    const creating = api.createUuids(ns, names("k", 500), 8);
    await waitFor(
      async () => {
        const m = await api.uuidsOf(ns);
        return [...m.values()].filter(Boolean).length >= 100;
      },
      "100 UUIDs before the kill",
      60_000,
      50,
    );
    await hub().kill();
    const atKill = await api.uuidsOf(ns);
    await creating;
    restart();
    const after = await waitAllAssigned(api, ns, 500);
    for (const [name, uuid] of atKill) if (uuid) assert.equal(after.get(name), uuid, `${name} changed`);
    await new Promise((r) => setTimeout(r, 1000));
    await assertObservedStable(history, after.keys());
    assert.deepEqual(history.partial, [], "objects seen with a half-written status");
    assert.equal(new Set(after.values()).size, 500, "UUIDs are unique");
  });
});

/** Sum of the samples of counter `name` (Prometheus text) whose labels include `labels`; 0 when none match. */
function seriesSum(text: string, name: string, labels: Record<string, string>): number {
  let sum = 0;
  for (const line of text.split("\n")) {
    if (!line.startsWith(`${name}{`)) continue;
    if (!Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`))) continue;
    sum += Number(line.slice(line.lastIndexOf(" ") + 1));
  }
  return sum;
}

Deno.test("Two hubs on the same clusters at once write each UUID once and never overwrite one", async () => {
  const ns = "twohubs";
  const started = await Promise.allSettled(["twohubs-prod", "twohubs-staging"].map((c) => privateCluster(c, ns)));
  const privates = started.flatMap((r) => r.status === "fulfilled" ? [r.value] : []);
  const failed = started.find((r): r is PromiseRejectedResult => r.status === "rejected");
  if (failed) {
    for (const p of privates) {
      p.api.close();
      await p.f.destroy();
    }
    throw failed.reason;
  }
  const fs = privates.map((p) => p.f);
  const clusters = fs.map((f) => f.name);
  const apis = privates.map((p) => p.api);
  const histories = apis.map((a) => a.observe(ns));
  const hubs = [hubOn(fs), hubOn(fs)];
  try {
    await Promise.all(hubs.map((h) => h.waitReady()));
    const okBefore = await Promise.all(apis.map((a) => a.uuidWrites(true)));
    const allBefore = await Promise.all(apis.map((a) => a.uuidWrites()));
    await Promise.all(apis.map((a) => a.createUuids(ns, names("t", 100))));
    await Promise.all(apis.map((a) => waitAllAssigned(a, ns, 100)));
    await new Promise((r) => setTimeout(r, 1500));
    for (const [i, h] of histories.entries()) await assertObservedStable(h, names("t", 100), clusters[i]);
    const okAfter = await Promise.all(apis.map((a) => a.uuidWrites(true)));
    const allAfter = await Promise.all(apis.map((a) => a.uuidWrites()));
    for (const i of [0, 1]) assert.equal(okAfter[i] - okBefore[i], 100, `${clusters[i]}: successful writes`);
    // Both hubs raced: each reconciled every object in both clusters, and every write the apiservers saw is one of
    // theirs; either some lost with 409 Conflict, or both won some.
    const ms = await Promise.all(hubs.map(async (h) => (await h.get("/metrics")).text as string));
    const won = [0, 0];
    let conflicts = 0;
    for (const [i, cluster] of clusters.entries()) {
      let attempts = 0;
      for (const [j, m] of ms.entries()) {
        const reconciled = seriesSum(m, "controller_runtime_reconcile_total", { cluster, result: "success" });
        assert.ok(reconciled >= 100, `hub ${j} reconciled ${reconciled} of 100 objects in ${cluster}`);
        won[j] += seriesSum(m, "rest_client_requests_total", { cluster, method: "PATCH", code: "200" });
        conflicts += seriesSum(m, "rest_client_requests_total", { cluster, method: "PATCH", code: "409" });
        attempts += seriesSum(m, "rest_client_requests_total", { cluster, method: "PATCH" });
      }
      assert.equal(attempts, allAfter[i] - allBefore[i], `${cluster}: the hubs' writes are the apiserver's`);
    }
    console.log(`figure: two hubs on 200 new Uuids: hub 0 won ${won[0]}, hub 1 won ${won[1]}, ${conflicts} lost (409)`);
    assert.ok(conflicts > 0 || (won[0] > 0 && won[1] > 0), `no race: won ${won.join("/")}, ${conflicts} conflicts`);
  } finally {
    await Promise.all(hubs.map((h) => h.kill()));
    await Promise.all(histories.map((h) => h.stop()));
    apis.forEach((a) => a.close());
    await Promise.all(fs.map((f) => f.destroy()));
  }
});

Deno.test("SIGTERM during a burst exits 0 and leaves no half-written status", async () => {
  await onProd("sigterm", async ({ ns, api, history, hub, restart }) => {
    await hub().waitReady();
    const creating = api.createUuids(ns, names("s", 200), 8);
    await waitFor(async () => [...(await api.uuidsOf(ns)).values()].filter(Boolean).length >= 20, "20 done");
    const status = await hub().stop("SIGTERM");
    assert.equal(status.code, 0, `exit code after SIGTERM\n${hub().tail()}`);
    await creating;
    for (const o of await api.listUuids(ns)) {
      const st = o.status;
      if (st) {
        assert.ok(UUID_V4.test(st.uuid) && st.state === "Ok" && typeof st.message === "string", JSON.stringify(st));
      }
    }
    restart();
    const after = await waitAllAssigned(api, ns, 200);
    await assertObservedStable(history, after.keys());
    assert.deepEqual(history.partial, []);
  });
});

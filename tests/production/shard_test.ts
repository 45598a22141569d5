// End-to-end: three hubs with --shard on the real local clusters prod, staging and dev: each cluster owned and
// watched by exactly one replica; kill -9 of an owner hands its clusters to the others; no UUID is written twice.
// deno-lint-ignore-file no-explicit-any -- /status is checked field by field.

import assert from "node:assert/strict";
import { HubProcess } from "../../dev/support/hub_process.ts";
import { requireClusters, testNamespace } from "../support/mod.ts";
import { type ClusterApi, localApi, names, waitAllAssigned, waitFor } from "../../dev/support/cluster_api.ts";
import { cleanupReplicas, kustomize, StatusWrites } from "./_support.ts";
import { metricSum, parseMetrics } from "../support/prometheus_text.ts";

const CLUSTERS = ["prod", "staging", "dev"];
/** Short Leases so the test takes seconds: a dead replica's clusters are free 6 s after its last renewal. */
const TIMINGS = [
  "--shard-lease-duration",
  "6",
  "--shard-renew-deadline",
  "4",
  "--shard-renew-period",
  "1",
];
/** Hang guard, not a speed check: far above 5× the measured takeover (about 7 s here; see the figure line). */
const TAKEOVER_GUARD_MS = 90_000;

/** Each replica's view: identity, the clusters it engaged, and who it says owns each registered cluster. */
async function views(hubs: HubProcess[]): Promise<{ id: string; engaged: string[]; owners: any; s: any }[]> {
  return await Promise.all(hubs.map(async (h) => {
    // A replica that is gone is named with its exit code and last lines, not as a bare "fetch failed".
    const s = (await h.get("/status").catch((err) => {
      throw h.exited ? new Error(`a replica exited with ${h.exited.code}:\n${h.tail()}`) : err;
    })).body;
    return { id: s?.shard?.identity, engaged: Object.keys(s?.clusters ?? {}).sort(), owners: s?.shard?.clusters, s };
  }));
}

/** True when all replicas agree on one live owner per cluster, and each engaged exactly what it owns. */
function settled(vs: Awaited<ReturnType<typeof views>>): boolean {
  const ids = new Set(vs.map((v) => v.id));
  for (const c of CLUSTERS) {
    const owner = vs[0].owners?.[c];
    if (!owner || !ids.has(owner)) return false;
    if (vs.some((v) => v.owners?.[c] !== owner)) return false;
  }
  return vs.every((v) =>
    JSON.stringify(v.engaged) === JSON.stringify(CLUSTERS.filter((c) => v.owners[c] === v.id).sort()) &&
    v.engaged.every((c) => v.s.clusters[c].state === "watching" && v.s.clusters[c].owner === v.id)
  );
}

Deno.test("Three hubs with --shard: each cluster is owned and watched by exactly one replica, kill -9 of an owner hands its clusters to the others, and no UUID is written twice", async () => {
  requireClusters();
  const ns = await testNamespace("shard", { contexts: CLUSTERS });
  const apis: ClusterApi[] = CLUSTERS.map((c) => localApi(c));
  const writes = CLUSTERS.map((c) => new StatusWrites(c, ns.name));
  const histories = apis.map((a) => a.observe(ns.name));
  // The Leases live in the home cluster (prod, the first selected), in the test namespace.
  const args = ["--namespace", ns.name, "--shard", "--leader-elect-namespace", ns.name, ...TIMINGS];
  const hubs = [0, 1, 2].map(() => HubProcess.start({ clusters: CLUSTERS, args }));
  try {
    await Promise.all(writes.map((w) => w.ready));
    const writesBefore = await Promise.all(apis.map((api) => api.uuidWritesByCode()));
    await Promise.all(apis.map((api) => api.createUuids(ns.name, names("one", 5))));
    const before = await waitFor(
      async () => {
        const vs = await views(hubs);
        return vs.every((v) => v.s?.shard?.peers?.filter((p: any) => p.live).length === 3) && settled(vs) && vs;
      },
      "three replicas agreeing on one owner per cluster",
      60_000,
    );
    await Promise.all(apis.map((api) => waitAllAssigned(api, ns.name, 5)));
    for (const v of before) {
      assert.equal(v.s.shard.owned, v.engaged.length);
      assert.equal(v.s.shard.unowned, 0);
      assert.equal(v.s.ready, true, `${v.id} is ready, even with no cluster of its own`);
    }
    const metrics = (await hubs[0].get("/metrics")).text;
    for (
      const m of [
        "hub_shard_clusters_owned",
        "hub_shard_clusters_unowned",
        "hub_shard_peers",
        "hub_shard_handoffs_total",
      ]
    ) {
      assert.match(metrics, new RegExp(`^${m}(\\{[^}]*\\})? \\d+`, "m"), `${m} on /metrics`);
    }
    assert.match(metrics, /^hub_shard_peers 3$/m);

    // kill -9 the replica owning the most clusters; its clusters get new objects while it is dead.
    const victimIndex = before.reduce((best, v, i) => (v.engaged.length > before[best].engaged.length ? i : best), 0);
    const victim = before[victimIndex];
    assert.ok(victim.engaged.length > 0);
    await hubs[victimIndex].kill();
    const killedAt = performance.now();
    const survivors = hubs.filter((_, i) => i !== victimIndex);
    await Promise.all(apis.map((api) => api.createUuids(ns.name, names("two", 5))));
    const after = await waitFor(
      async () => {
        const vs = await views(survivors);
        return settled(vs) && CLUSTERS.every((c) => vs[0].owners[c] !== victim.id) && vs;
      },
      "the survivors owning every cluster",
      TAKEOVER_GUARD_MS,
    );
    const takeover = (performance.now() - killedAt) / 1000;
    await Promise.all(apis.map((api) => waitAllAssigned(api, ns.name, 10)));
    console.log(`figure: ${victim.engaged.join(",")} owned again ${takeover.toFixed(1)} s after kill -9 (lease 6 s)`);
    for (const v of after) {
      assert.equal(v.s.shard.fenceViolations, 0, `${v.id}: fence violations`);
      assert.ok(v.s.shard.handoffs.acquired >= v.engaged.length);
    }

    // Every object got exactly one status write, counted by the apiservers and by an independent watch, and no
    // UUID ever changed. The apiservers count successful writes (2xx): a request they refused or timed out (a 504 from
    // a slow etcd on a loaded machine) wrote nothing and was retried; those are printed, not counted.
    await new Promise((r) => setTimeout(r, 1500));
    for (const [i, api] of apis.entries()) {
      const now = await api.uuidWritesByCode();
      const delta = Object.entries(now).map(([code, n]) => [code, n - (writesBefore[i][code] ?? 0)] as const)
        .filter(([, n]) => n > 0);
      const refused = delta.filter(([code]) => !code.startsWith("2"));
      if (refused.length > 0) {
        console.log(`figure: ${CLUSTERS[i]}: Uuid writes refused by code ${JSON.stringify(refused)}`);
      }
      const ok = delta.filter(([code]) => code.startsWith("2")).reduce((n, [, v]) => n + v, 0);
      assert.equal(
        ok,
        10,
        `${CLUSTERS[i]}: successful Uuid writes at the apiserver (all codes: ${JSON.stringify(delta)})`,
      );
      assert.deepEqual(writes[i].repeated(), [], `${CLUSTERS[i]}: objects whose status changed more than once`);
      histories[i].assertStable([...names("one", 5), ...names("two", 5)], CLUSTERS[i]);
      assert.deepEqual(histories[i].partial, [], `${CLUSTERS[i]}: half-written statuses`);
    }
    for (const h of survivors) assert.equal((await h.stop()).code, 0, h.tail());
  } finally {
    await cleanupReplicas({ hubs, observers: [...histories, ...writes], apis, namespace: ns });
  }
});

Deno.test("Two hubs with --shard-warm: both watch every cluster, each reconciles only its own, and after a SIGTERM the other takes over at once from its warm caches", async () => {
  requireClusters();
  const ns = await testNamespace("shard-warm", { contexts: CLUSTERS });
  const apis: ClusterApi[] = CLUSTERS.map((c) => localApi(c));
  const histories = apis.map((a) => a.observe(ns.name));
  const args = ["--namespace", ns.name, "--shard", "--shard-warm", "--leader-elect-namespace", ns.name, ...TIMINGS];
  const hubs = [0, 1].map(() => HubProcess.start({ clusters: CLUSTERS, args }));
  try {
    // Settled first: both agree on one owner per cluster, and both watch all three (warm), every one `watching`.
    // (Objects created before that may be reconciled by a replica that owned a cluster until its peer appeared.)
    const vs = await waitFor(
      async () => {
        const v = await views(hubs);
        const ok = v.every((x) => x.s?.shard?.peers?.filter((p: any) => p.live).length === 2) &&
          CLUSTERS.every((c) => v[0].owners?.[c] && v.every((x) => x.owners?.[c] === v[0].owners[c])) &&
          v.every((x) => x.engaged.length === 3 && x.engaged.every((c) => x.s.clusters[c].state === "watching"));
        return ok && v;
      },
      "two warm replicas agreeing on the owners",
      60_000,
    );
    const reconciles = async () =>
      await Promise.all(hubs.map(async (h) => {
        const m = parseMetrics((await h.get("/metrics")).text);
        return CLUSTERS.map((c) => metricSum(m, "controller_runtime_reconcile_total", { cluster: c }));
      }));
    const before = await reconciles();
    await Promise.all(apis.map((api) => api.createUuids(ns.name, names("one", 3))));
    await Promise.all(apis.map((api) => waitAllAssigned(api, ns.name, 3)));
    for (const [i, c] of CLUSTERS.entries()) {
      const owner = vs.findIndex((v) => v.id === vs[0].owners[c]);
      await hubs[1 - owner].waitStatus(
        (s) => s.clusters?.[c]?.objects === 3,
        TAKEOVER_GUARD_MS,
        `the non-owner of ${c} keeping its cache warm (3 objects)`,
      );
      const after = await reconciles();
      assert.equal(after[1 - owner][i] - before[1 - owner][i], 0, `${c}: reconciles by the non-owner`);
      assert.ok(after[owner][i] - before[owner][i] >= 3, `${c}: reconciles by the owner`);
    }
    // SIGTERM the replica owning more clusters: it releases its fences, and the other owns everything at once.
    const leaving = vs[0].s.shard.owned >= vs[1].s.shard.owned ? 0 : 1;
    assert.equal((await hubs[leaving].stop()).code, 0, hubs[leaving].tail());
    const stayer = hubs[1 - leaving];
    await stayer.waitStatus(
      (s) => CLUSTERS.every((c) => s.shard?.clusters?.[c] === s.shard.identity),
      TAKEOVER_GUARD_MS,
      "the other replica owning every cluster",
    );
    await Promise.all(apis.map((api) => api.createUuids(ns.name, names("two", 3))));
    await Promise.all(apis.map((api) => waitAllAssigned(api, ns.name, 6)));
    for (const [i, h] of histories.entries()) h.assertStable([...names("one", 3), ...names("two", 3)], CLUSTERS[i]);
    const s = (await stayer.get("/status")).body;
    assert.equal(s.shard.fenceViolations, 0);
    assert.equal((await stayer.stop()).code, 0, stayer.tail());
  } finally {
    await cleanupReplicas({ hubs, observers: histories, apis, namespace: ns });
  }
});

Deno.test("deploy/'s sharded component makes three --shard replicas and grants the Lease verbs sharding uses, only in the hub's namespace", async () => {
  const root = new URL("../..", import.meta.url).pathname;
  const tmp = await Deno.makeTempDir({ dir: `${root}.cache` });
  try {
    await new Deno.Command("cp", { args: ["-r", `${root}deploy`, tmp] }).output();
    const file = `${tmp}/deploy/kustomization.yaml`;
    const text = await Deno.readTextFile(file);
    assert.match(
      text,
      /^# components:\n# {3}- sharded$/m,
      "deploy/kustomization.yaml names the component, commented out",
    );
    await Deno.writeTextFile(file, text.replace("# components:\n#   - sharded", "components:\n  - sharded"));
    const docs = await kustomize(`${tmp.slice(root.length)}/deploy`);
    const deployment = docs.find((d) => d.kind === "Deployment");
    const args: string[] = deployment.spec.template.spec.containers[0].args;
    assert.equal(deployment.spec.replicas, 3);
    assert.ok(args.includes("--shard") && !args.includes("--leader-elect"), args.join(" "));
    const role = docs.find((d) => d.kind === "Role" && d.metadata.name === "operator-hub-leader-election");
    assert.equal(role.metadata.namespace, "operator-hub");
    assert.deepEqual(role.rules, [{
      apiGroups: ["coordination.k8s.io"],
      resources: ["leases"],
      verbs: ["get", "create", "update", "list", "watch", "delete"],
    }]);
    const base = (await kustomize("deploy")).find((d) => d.kind === "Deployment");
    assert.ok(base.spec.template.spec.containers[0].args.includes("--leader-elect"), "the base still elects a leader");
  } finally {
    await Deno.remove(tmp, { recursive: true });
  }
});

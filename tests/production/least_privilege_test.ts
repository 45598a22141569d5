// End-to-end: ServiceAccounts bound only to deploy/'s ClusterRole run the hub green; with one rule removed the RBAC
// pre-flight names exactly what is missing in /status, and the hub neither crashes nor fails liveness.
// deno-lint-ignore-file no-explicit-any -- rules and /status are checked field by field.

import assert from "node:assert/strict";
import { localApi, UUID_V4, waitFor } from "../support/cluster_api.ts";
import { HubProcess } from "../support/hub_process.ts";
import { requireClusters, testNamespace } from "../support/mod.ts";
import { HubIdentity, remoteKubeconfig } from "./_support.ts";

const CONTEXT = "dev";
const has = (group: string, resource: string, verb?: string) => (r: any) =>
  r.apiGroups.includes(group) && r.resources.includes(resource) && (verb === undefined || r.verbs.includes(verb));

/** Each variant: a ClusterRole without one rule (or without the Lease Role), and what /status must name. */
const VARIANTS: { name: string; drop?: (r: any) => boolean; leases?: boolean; missing: string[] }[] = [
  { name: "full", missing: [] },
  { name: "no-status", drop: has("demo.operator", "uuid/status"), missing: ["patch uuid/status.demo.operator"] },
  { name: "no-events", drop: has("", "events"), missing: ["create events"] },
  {
    name: "no-watch",
    drop: has("demo.operator", "uuid", "watch"),
    missing: ["get uuid.demo.operator", "list uuid.demo.operator", "watch uuid.demo.operator"],
  },
  {
    name: "no-leases",
    leases: false,
    missing: [
      "get leases.coordination.k8s.io",
      "create leases.coordination.k8s.io",
      "update leases.coordination.k8s.io",
    ],
  },
];

Deno.test("Identities bound only to deploy/'s ClusterRole run the hub green; with one rule removed the pre-flight reports `forbidden` naming the missing verb and resource", async () => {
  requireClusters();
  const ns = await testNamespace("rbac", { contexts: [CONTEXT] });
  const tmp = await Deno.makeTempDir({ prefix: "operator-hub-rbac-" });
  const identities: HubIdentity[] = [];
  const api = localApi(CONTEXT);
  let hub: HubProcess | undefined;
  try {
    const kubeconfigs: string[] = [];
    for (const v of VARIANTS) {
      const id = await HubIdentity.create(CONTEXT, ns.name, `hub-${v.name}`, { dropRule: v.drop, leases: v.leases });
      identities.push(id);
      const file = `${tmp}/${v.name}.yaml`;
      Deno.writeTextFileSync(file, remoteKubeconfig(CONTEXT, await id.token(), v.name));
      kubeconfigs.push(file);
    }
    // One hub, five views of the same cluster; the Lease (and its pre-flight) lives in "no-leases".
    hub = HubProcess.start({
      clusters: VARIANTS.map((v) => v.name),
      kubeconfigs,
      args: [
        "--namespace",
        ns.name,
        "--leader-elect",
        "--leader-elect-cluster",
        "no-leases",
        "--leader-elect-namespace",
        ns.name,
      ],
    });
    const status = await hub.waitStatus(
      (s) => VARIANTS.every((v) => s.clusters[v.name]?.state === (v.missing.length ? "forbidden" : "watching")),
      60_000,
      "every variant's pre-flight settled",
    );
    for (const v of VARIANTS) {
      const c = status.clusters[v.name];
      assert.deepEqual(
        c.missingPermissions.map((p: string) => p.replace(` in namespace ${ns.name}`, "")),
        v.missing,
        `${v.name}: missingPermissions`,
      );
      if (v.missing.length) {
        assert.match(c.lastError, /^missing RBAC permissions: /);
        for (const m of v.missing) assert.ok(c.lastError.includes(m), `${v.name}: lastError names ${m}`);
        assert.equal(c.synced, false);
      }
    }
    // A forbidden cluster is reported, not fatal: liveness stays green, readiness waits for it.
    assert.equal((await hub.get("/healthz")).status, 200);
    assert.equal((await hub.get("/readyz")).status, 503);
    // The identity with the full ClusterRole reconciles (the Lease still lives where the pre-flight failed,
    // in "no-leases": its missing Role stops the election, so lead from "full" in a second run).
    await hub.stop();
    hub = HubProcess.start({
      clusters: ["full"],
      kubeconfigs: [kubeconfigs[0]],
      args: ["--namespace", ns.name, "--leader-elect", "--leader-elect-namespace", ns.name],
    });
    await hub.waitStatus((s) => s.ready && s.leaderElection?.leader === true, 60_000, "ready and leading");
    await api.createUuids(ns.name, ["x-0", "x-1", "x-2"]);
    await waitFor(async () => {
      const m = await api.uuidsOf(ns.name);
      return [...m.values()].filter((u) => typeof u === "string" && UUID_V4.test(u)).length === 3;
    }, "3 Uuids assigned by the least-privilege identity");
    assert.equal((await hub.stop()).code, 0, hub.tail());
  } finally {
    await hub?.kill();
    await api.deleteAllUuids(ns.name).catch(() => {});
    api.close();
    for (const id of identities) await id.cleanup();
    await ns.cleanup();
    await Deno.remove(tmp, { recursive: true });
  }
});

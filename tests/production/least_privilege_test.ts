// End-to-end: ServiceAccounts bound only to deploy/'s ClusterRole run the hub green; with one rule removed the RBAC
// pre-flight names exactly what is missing in /status, and the hub neither crashes nor fails liveness.
// deno-lint-ignore-file no-explicit-any -- rules and /status are checked field by field.

import assert from "node:assert/strict";
import { localApi, UUID_V4, waitFor } from "../../dev/support/cluster_api.ts";
import { HubProcess } from "../../dev/support/hub_process.ts";
import { kubectl, requireClusters, testNamespace } from "../support/mod.ts";
import { deployOperatorArgs, hubIdentity, remoteKubeconfig } from "./_support.ts";
import type { TestServiceAccount } from "../support/service_account.ts";
import { AccessReviews, type AskedPermission, canIArgs } from "./_apiserver_proxy.ts";
import { proxyInFrontOf } from "../support/local_proxy.ts";
import type { InterceptProxy } from "../support/intercept_proxy.ts";
import { describePermission } from "../../src/kube/mod.ts";

const CONTEXT = "dev";
const has = (group: string, resource: string, verb?: string) => (r: any) =>
  r.apiGroups.includes(group) && r.resources.includes(resource) && (verb === undefined || r.verbs.includes(verb));

/**
 * Each variant: a ClusterRole without one rule (or without the Lease Role). What /status must name is not written
 * here: it is derived from what the hub's pre-flight asks (seen at a proxy) and what the API server denies.
 */
const VARIANTS: { name: string; drop?: (r: any) => boolean; leases?: boolean }[] = [
  { name: "full" },
  { name: "no-status", drop: has("demo.operator", "uuid/status") },
  { name: "no-events", drop: has("", "events") },
  { name: "no-watch", drop: has("demo.operator", "uuid", "watch") },
  { name: "no-leases", leases: false },
];

/** Whether the API server lets `id` do what `p` asks (kubectl auth can-i, impersonating the ServiceAccount). */
async function allowed(id: TestServiceAccount, p: AskedPermission): Promise<boolean> {
  const args = [...canIArgs(p), `--as=system:serviceaccount:${id.namespace}:${id.name}`];
  const r = await kubectl(CONTEXT, ["auth", "can-i", ...args]);
  if (r.code === 0 && r.stdout.trim() === "yes") return true;
  if (r.code === 1 && r.stdout.trim() === "no") return false;
  throw new Error(`kubectl auth can-i ${args.join(" ")}: exit ${r.code}: ${r.stdout} ${r.stderr}`);
}

Deno.test("Identities bound only to deploy/'s ClusterRole run the hub green; with one rule removed the pre-flight reports `forbidden` naming the missing verb and resource", async () => {
  requireClusters();
  const ns = await testNamespace("rbac", { contexts: [CONTEXT] });
  const tmp = await Deno.makeTempDir({ prefix: "operator-hub-rbac-" });
  const identities: TestServiceAccount[] = [];
  const proxies: InterceptProxy[] = [];
  const reviews = VARIANTS.map(() => new AccessReviews());
  const api = localApi(CONTEXT);
  let hub: HubProcess | undefined;
  try {
    const kubeconfigs: string[] = [];
    // The operators the shipped Deployment runs: deploy/'s ClusterRole is theirs.
    const operators = await deployOperatorArgs();
    for (const v of VARIANTS) {
      const id = await hubIdentity(CONTEXT, ns.name, `hub-${v.name}`, { dropRule: v.drop, leases: v.leases });
      identities.push(id);
      // Each view reaches the apiserver through its own proxy, which records the pre-flight's questions.
      const proxy = await proxyInFrontOf(CONTEXT);
      proxy.hook = reviews[identities.length - 1].hook;
      proxies.push(proxy);
      const file = `${tmp}/${v.name}.yaml`;
      Deno.writeTextFileSync(file, remoteKubeconfig(CONTEXT, await id.token(), v.name, proxy.url));
      kubeconfigs.push(file);
    }
    // One hub, five views of the same cluster; the Lease (and its pre-flight) lives in "no-leases".
    hub = HubProcess.start({
      clusters: VARIANTS.map((v) => v.name),
      kubeconfigs,
      args: [
        ...operators,
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
      (s) => VARIANTS.every((v) => ["forbidden", "watching"].includes(s.clusters[v.name]?.state)),
      60_000,
      "every variant's pre-flight settled",
    );
    for (const [i, v] of VARIANTS.entries()) {
      // One namespace watched: its rules are asked first, and access reviews only for what they do not allow (all
      // that an identity lacks is still asked that way, so `denied` below is exactly what it lacks).
      const asked = reviews[i].asked();
      assert.deepEqual(reviews[i].rulesAsked(), [ns.name], `${v.name}: the pre-flight asked the namespace's rules`);
      const denied: string[] = [];
      for (const p of asked) if (!(await allowed(identities[i], p))) denied.push(describePermission(p));
      // The removed rule must be felt: every variant but "full" is denied something the pre-flight asks.
      assert.equal(denied.length === 0, v.name === "full", `${v.name}: denied ${JSON.stringify(denied)}`);
      const c = status.clusters[v.name];
      assert.equal(c.state, denied.length ? "forbidden" : "watching", `${v.name}: state`);
      assert.deepEqual([...c.missingPermissions].sort(), [...denied].sort(), `${v.name}: missingPermissions`);
      if (denied.length) {
        assert.match(c.lastError, /missing RBAC permissions: /);
        for (const m of denied) assert.ok(c.lastError.includes(m), `${v.name}: lastError names ${m}`);
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
      args: [...operators, "--namespace", ns.name, "--leader-elect", "--leader-elect-namespace", ns.name],
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
    for (const proxy of proxies) await proxy.close();
    await api.deleteAllUuids(ns.name).catch(() => {});
    api.close();
    for (const id of identities) await id.cleanup();
    await ns.cleanup();
    await Deno.remove(tmp, { recursive: true });
  }
});

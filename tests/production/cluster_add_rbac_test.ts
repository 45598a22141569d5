// What `cluster:add` grants the hub in a cluster it registers, asked back from that cluster's API server: the Uuid
// operator's rights only by default (no Secret anywhere), the Mirror operator's as Roles in the namespaces named with
// --mirror-namespaces, and `cluster:remove --purge` takes those Roles back. A private apiserver, as cluster:add
// installs cluster-scoped objects (ClusterRole, binding, CRDs) that the shared clusters' other tests also use.

import assert from "node:assert/strict";
import { loadContexts } from "../../src/kube/mod.ts";
import { addCluster, removeCluster } from "../../src/registration/cluster_registration.ts";
import { FaultApiserver, requireClusters, tempDir } from "../support/mod.ts";
import { ROOT } from "./_support.ts";

const HUB = "system:serviceaccount:operator-hub:operator-hub";

Deno.test("cluster:add grants the hub no Secret in the registered cluster by default, and with --mirror-namespaces a a Role in a only (not in b, nor -A); cluster:remove --purge deletes that Role", async () => {
  requireClusters();
  await using dir = await tempDir("cluster-add-rbac");
  const target = await FaultApiserver.start({ name: "add-rbac", installCrds: false });
  /** `kubectl auth can-i` in the target as the hub's ServiceAccount: true for yes, false for no, throws otherwise. */
  const can = async (verb: string, resource: string, ns?: string) => {
    const args = [
      `--kubeconfig=${target.adminKubeconfig}`,
      `--context=${target.name}`,
      "auth",
      "can-i",
      verb,
      resource,
      `--as=${HUB}`,
      ...(ns ? ["-n", ns] : ["-A"]),
    ];
    const out = await new Deno.Command("kubectl", { args, stdin: "null" }).output();
    const answer = new TextDecoder().decode(out.stdout).trim();
    if (out.code === 0 && answer === "yes") return true;
    if (out.code === 1 && answer === "no") return false;
    throw new Error(`kubectl ${args.join(" ")}: exit ${out.code}: ${answer} ${new TextDecoder().decode(out.stderr)}`);
  };
  try {
    const [access] = (await loadContexts({ files: [target.adminKubeconfig] })).select([target.name]);
    for (const ns of ["team-a", "team-b"]) await target.kubectl(["create", "namespace", ns]);
    const lines: string[] = [];
    const base = {
      target: access,
      name: "edge",
      registration: { kind: "file" as const, dir: dir.path },
      root: ROOT,
      revokeAfterMs: 0,
      print: (l: string) => lines.push(l),
    };
    await addCluster(base);
    // Positive control: the hub's identity exists and is bound (the Uuid operator's rights), so the noes are RBAC's.
    assert.equal(await can("list", "uuid.demo.operator"), true);
    for (const [verb, res, ns] of [["list", "secrets"], ["get", "secrets", "team-a"], ["list", "configmaps"]]) {
      assert.equal(await can(verb, res, ns), false, `by default the hub may not ${verb} ${res} ${ns ?? "-A"}`);
    }
    assert.ok(!lines.some((l) => / Role(Binding)? /.test(l)), lines.join("\n"));

    // A missing namespace is refused before anything is applied.
    await assert.rejects(addCluster({ ...base, mirrorNamespaces: ["team-a", "missing"] }), /namespace\(s\) missing/);
    assert.equal(await can("list", "secrets", "team-a"), false, "nothing granted by the refused run");

    lines.length = 0;
    await addCluster({ ...base, mirrorNamespaces: ["team-a"] });
    assert.ok(lines.some((l) => /^applied Role team-a\/operator-hub-mirror in /.test(l)), lines.join("\n"));
    assert.equal(await can("list", "secrets", "team-a"), true);
    assert.equal(await can("patch", "configmaps", "team-a"), true);
    assert.equal(await can("list", "secrets", "team-b"), false);
    assert.equal(await can("list", "secrets"), false);
    assert.equal(await can("create", "namespaces"), false);

    lines.length = 0;
    await removeCluster({ name: "edge", registration: base.registration, purge: access, print: (l) => lines.push(l) });
    assert.ok(lines.includes(`deleted Role team-a/operator-hub-mirror in "${target.name}"`), lines.join("\n"));
    assert.ok(lines.includes(`deleted RoleBinding team-a/operator-hub-mirror in "${target.name}"`));
    const left = await target.kubectl(["get", "roles,rolebindings", "-n", "team-a", "-o", "name"]);
    assert.equal(left.trim(), "", "the purge leaves no Role behind");
  } finally {
    await target.destroy();
  }
});

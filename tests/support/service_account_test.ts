// Tests of TestServiceAccount on prod: its token carries the rights it was given, recreate revokes old tokens, and
// cleanup removes the cluster-scoped objects.
import assert from "node:assert/strict";
import { apiserverCa, apiserverUrl, kubectl, requireClusters, testNamespace } from "./mod.ts";
import { TestServiceAccount } from "./service_account.ts";
import { waitFor } from "../../dev/support/cluster_api.ts";

/** Status of GET `path` on prod with `token`. */
async function statusWith(token: string, path: string): Promise<number> {
  const client = Deno.createHttpClient({ caCerts: [apiserverCa("prod")] });
  try {
    const res = await fetch(apiserverUrl("prod") + path, { client, headers: { authorization: `Bearer ${token}` } });
    await res.body?.cancel();
    return res.status;
  } finally {
    client.close();
  }
}

Deno.test("a TestServiceAccount's token has exactly its grants, a recreate revokes it, and cleanup removes its ClusterRole", async () => {
  requireClusters();
  await using ns = await testNamespace("service-account", { contexts: ["prod"] });
  const role = `operator-hub-test-sa-${ns.name}`;
  const sa = await TestServiceAccount.create("prod", ns.name, "reader", {
    rbac: [
      {
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "ClusterRole",
        metadata: { name: role },
        rules: [{ apiGroups: [""], resources: ["namespaces"], verbs: ["get"] }],
      },
      {
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "ClusterRoleBinding",
        metadata: { name: role },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: role },
        subjects: [{ kind: "ServiceAccount", name: "reader", namespace: ns.name }],
      },
    ],
    clusterScoped: [`clusterrolebinding/${role}`, `clusterrole/${role}`],
  });
  try {
    const token = await sa.token("10m");
    assert.equal(await statusWith(token, `/api/v1/namespaces/${ns.name}`), 200);
    assert.equal(await statusWith(token, `/api/v1/namespaces/${ns.name}/secrets`), 403);
    await sa.recreate();
    // the apiserver caches a token's authentication for a few seconds
    await waitFor(
      async () => (await statusWith(token, `/api/v1/namespaces/${ns.name}`)) === 401,
      "old token 401",
      30_000,
    );
  } finally {
    await sa.cleanup();
  }
  for (const obj of [`clusterrolebinding/${role}`, `clusterrole/${role}`]) {
    const r = await kubectl("prod", ["get", obj, "--ignore-not-found", "-o", "name"]);
    assert.equal(r.stdout.trim(), "", `${obj} is gone after cleanup`);
  }
  await sa.cleanup(); // a second cleanup finds nothing and does not throw
});

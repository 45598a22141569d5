// End-to-end: `apply` needs `create`. A hub whose only identity in prod is a ServiceAccount token bound by a Role in
// the test namespace that grants `patch` but not `create` of ConfigMaps runs an operator that `uses` ConfigMaps with
// `apply` (tests/fixtures/website_apply_operator.ts): its pre-flight reports exactly `create configmaps` missing on
// /status and the operator does not start (a Website gets nothing); once the Role grants `create`, it runs.

import assert from "node:assert/strict";
import { ClusterApiError, localApi, waitFor } from "../dev/support/cluster_api.ts";
import { HubProcess } from "../dev/support/hub_process.ts";
import { apiserverCa, apiserverUrl, applySharedCrd, kubectlOk, testNamespace } from "./support/mod.ts";

const CONTEXT = "prod";
const CLUSTER = "prod-as-sa";
const CRD_FILE = new URL("../examples/website_crd.yaml", import.meta.url).pathname;
const WEBSITES = "/apis/examples.operator-hub.dev/v1";
const OPERATOR = "website-apply";

/** The Role's rules: what the operator needs, with ConfigMaps' verbs given. */
function rules(configMapVerbs: string[]) {
  return [
    { apiGroups: ["examples.operator-hub.dev"], resources: ["websites"], verbs: ["get", "list", "watch"] },
    { apiGroups: ["examples.operator-hub.dev"], resources: ["websites/status"], verbs: ["patch"] },
    { apiGroups: [""], resources: ["events"], verbs: ["create"] },
    { apiGroups: [""], resources: ["configmaps"], verbs: configMapVerbs },
  ];
}

Deno.test("apply needs create: a ServiceAccount that may patch but not create ConfigMaps has `create configmaps` reported missing and the operator not started; granted create, it runs", async () => {
  const started = performance.now();
  await applySharedCrd(CONTEXT, CRD_FILE);
  await kubectlOk(CONTEXT, ["wait", "--for=condition=Established", "crd/websites.examples.operator-hub.dev"]);
  const ns = await testNamespace("sdk-apply", { contexts: [CONTEXT] });
  const api = localApi(CONTEXT);
  const dir = await Deno.makeTempDir({ prefix: "sdk-apply-" });
  const role = `/apis/rbac.authorization.k8s.io/v1/namespaces/${ns.name}/roles/website-apply`;
  let hub: HubProcess | undefined;
  try {
    await api.request("POST", `/api/v1/namespaces/${ns.name}/serviceaccounts`, { metadata: { name: "hub" } });
    await api.request("POST", `/apis/rbac.authorization.k8s.io/v1/namespaces/${ns.name}/roles`, {
      metadata: { name: "website-apply" },
      rules: rules(["get", "patch"]),
    });
    await api.request("POST", `/apis/rbac.authorization.k8s.io/v1/namespaces/${ns.name}/rolebindings`, {
      metadata: { name: "website-apply" },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "website-apply" },
      subjects: [{ kind: "ServiceAccount", name: "hub", namespace: ns.name }],
    });
    const token = (await kubectlOk(CONTEXT, ["create", "token", "hub", "-n", ns.name, "--duration=10m"])).trim();
    const kubeconfig = `${dir}/prod.yaml`;
    await Deno.writeTextFile(
      kubeconfig,
      JSON.stringify({
        apiVersion: "v1",
        kind: "Config",
        clusters: [{
          name: CLUSTER,
          cluster: { server: apiserverUrl(CONTEXT), "certificate-authority-data": btoa(apiserverCa(CONTEXT)) },
        }],
        users: [{ name: CLUSTER, user: { token } }],
        contexts: [{ name: CLUSTER, context: { cluster: CLUSTER, user: CLUSTER } }],
        "current-context": CLUSTER,
      }),
    );
    await api.request("POST", `${WEBSITES}/namespaces/${ns.name}/websites`, {
      apiVersion: "examples.operator-hub.dev/v1",
      kind: "Website",
      metadata: { name: "site" },
      spec: { image: "web:1" },
    });
    hub = HubProcess.start({
      clusters: [CLUSTER],
      kubeconfigs: [kubeconfig],
      args: ["--namespace", ns.name, "--operators", "none", "tests/fixtures/website_apply_operator.ts"],
    });
    // patch is granted, create is not: the pre-flight names exactly `create configmaps`.
    const status = await hub.waitStatus(
      (s) => s.clusters?.[CLUSTER]?.operators?.[OPERATOR]?.state === "forbidden",
      20_000,
      "the pre-flight's verdict",
    );
    const op = status.clusters[CLUSTER].operators[OPERATOR];
    assert.deepEqual(op.missingPermissions, [`create configmaps in namespace ${ns.name}`], JSON.stringify(op));
    assert.deepEqual(status.clusters[CLUSTER].missingPermissions, op.missingPermissions);
    assert.equal(op.synced, false);
    // Not started: the Website was not handled (no done-mark) and its ConfigMap was never applied.
    const site = await api.request("GET", `${WEBSITES}/namespaces/${ns.name}/websites/site`);
    assert.equal(site.status, undefined, "the operator did not handle the Website");
    await api.request("GET", `/api/v1/namespaces/${ns.name}/configmaps/site-page`).then(
      () => assert.fail("site-page exists while the operator is forbidden"),
      (err) => assert.ok(err instanceof ClusterApiError && err.status === 404, String(err)),
    );
    console.log(
      `figure: apply pre-flight with patch only: missingPermissions ${JSON.stringify(op.missingPermissions)}`,
    );

    // create granted: the next pre-flight attempt passes and the operator runs.
    await api.request("PATCH", role, { rules: rules(["get", "patch", "create"]) });
    await hub.waitStatus(
      (s) => s.clusters?.[CLUSTER]?.operators?.[OPERATOR]?.state === "watching",
      20_000,
      "the operator watching once create is granted",
    );
    const page = await waitFor(
      () => api.request("GET", `/api/v1/namespaces/${ns.name}/configmaps/site-page`).catch(() => undefined),
      "site-page applied",
      15_000,
    );
    assert.deepEqual(page.data, { image: "web:1" });
    assert.equal(page.metadata.managedFields?.[0]?.manager, "website-apply");
    assert.equal((await hub.stop("SIGTERM")).code, 0, hub.tail());
    console.log(
      `figure: sdk_apply_preflight scenario wall time ${((performance.now() - started) / 1000).toFixed(1)} s`,
    );
  } finally {
    await hub?.kill();
    api.close();
    await Deno.remove(dir, { recursive: true });
    await ns.cleanup();
  }
});

// End to end: adopt's blockOwnerDeletion where the OwnerReferencesPermissionEnforcement admission plugin is on (as in
// OpenShift). A private apiserver runs with the plugin; a ServiceAccount holding every right the Website operator's
// pre-flight derives except `update websites/finalizers` is refused an adopted child by the apiserver itself, and the
// pre-flight checks (permissionsFor) report exactly that right missing. Granted it, nothing is missing and the child
// is created.

import assert from "node:assert/strict";
import { join } from "node:path";
import { FaultApiserver } from "../dev/support/fault_cluster.ts";
import { kubeconfigText } from "../dev/support/kubeconfig_text.ts";
import { website } from "../examples/website_operator.ts";
import { adopt } from "../mod.ts";
import {
  describePermission,
  KubeClient,
  loadContexts,
  missingPermissions,
  type PermissionCheck,
} from "../src/kube/mod.ts";
import { permissionsFor } from "../src/runtime/mod.ts";

const CRD = new URL("../examples/website_crd.yaml", import.meta.url).pathname;

/** One ClusterRole rule per check (RBAC's resource/subresource form). */
function rulesOf(checks: readonly PermissionCheck[]) {
  return checks.map((c) => ({
    apiGroups: [c.group],
    resources: [c.subresource ? `${c.resource}/${c.subresource}` : c.resource],
    verbs: [c.verb],
  }));
}

Deno.test("adopting needs update of <parent>/finalizers where OwnerReferencesPermissionEnforcement is on: the apiserver refuses the child without it, and the pre-flight names exactly it", async () => {
  const server = await FaultApiserver.start({
    name: "adopt-fin",
    extraArgs: ["--enable-admission-plugins=OwnerReferencesPermissionEnforcement"],
    installCrds: false,
  });
  let hub: KubeClient | undefined;
  try {
    await server.kubectl(["apply", "-f", CRD]);
    await server.kubectl(["wait", "--for=condition=Established", "crd/websites.examples.operator-hub.dev"]);
    const checks = permissionsFor(website, { statusSubresource: true, namespaces: [] });
    const finalizers = checks.filter((c) => c.subresource === "finalizers");
    assert.deepEqual(finalizers.map(describePermission), ["update websites/finalizers.examples.operator-hub.dev"]);
    const role = (rules: unknown[]) =>
      JSON.stringify({
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "ClusterRole",
        metadata: { name: "website-hub" },
        rules,
      });
    await server.kubectl(["create", "namespace", "web"]);
    await server.kubectl(["create", "serviceaccount", "hub", "-n", "web"]);
    await server.kubectl(["apply", "-f", "-"], role(rulesOf(checks.filter((c) => c.subresource !== "finalizers"))));
    await server.kubectl([
      "create",
      "clusterrolebinding",
      "website-hub",
      "--clusterrole=website-hub",
      "--serviceaccount=web:hub",
    ]);
    const token = (await server.kubectl(["create", "token", "hub", "-n", "web", "--duration=10m"])).trim();
    const file = join(server.dir, "hub.kubeconfig");
    await Deno.writeTextFile(file, kubeconfigText([server.context("hub", { user: { token } })]), { mode: 0o600 });
    const [access] = (await loadContexts({ files: [file] })).select(["hub"]);
    hub = new KubeClient(access, { requestTimeoutMs: 15_000 });

    const missing = await missingPermissions(hub, checks);
    assert.deepEqual(missing.map(describePermission), ["update websites/finalizers.examples.operator-hub.dev"]);

    const site = JSON.parse(
      await server.kubectl(
        ["create", "-o", "json", "-f", "-"],
        JSON.stringify({
          apiVersion: "examples.operator-hub.dev/v1",
          kind: "Website",
          metadata: { name: "site", namespace: "web" },
          spec: { image: "nginx:1.27" },
        }),
      ),
    );
    const parent = { object: site, type: website.resource, cluster: "adopt-fin" };
    const child = (name: string) =>
      adopt({ apiVersion: "v1", kind: "ConfigMap", metadata: { name }, data: {} }, parent);
    const refused = await hub.request("POST", "/api/v1/namespaces/web/configmaps", { body: child("refused") }).then(
      () => undefined,
      (err: Error) => err,
    );
    assert.ok(refused, "the apiserver refuses a blockOwnerDeletion owner reference without the finalizers right");
    assert.match(refused.message, /cannot set blockOwnerDeletion/);

    await server.kubectl(["apply", "-f", "-"], role(rulesOf(checks)));
    const deadline = Date.now() + 10_000;
    while ((await missingPermissions(hub, checks)).length && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 200));
    }
    assert.deepEqual((await missingPermissions(hub, checks)).map(describePermission), []);
    const created = await hub.request<{ metadata: { ownerReferences: { blockOwnerDeletion: boolean }[] } }>(
      "POST",
      "/api/v1/namespaces/web/configmaps",
      { body: child("adopted") },
    );
    assert.equal(created.metadata.ownerReferences[0].blockOwnerDeletion, true);
  } finally {
    hub?.close();
    await server.destroy();
  }
});

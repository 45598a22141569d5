// End-to-end: two kubeconfig contexts on one API server, each opted in to namespaced access with only a Role in its
// own namespace, are two clusters of one hub: each lists, watches and reconciles only its namespace's Uuids.
// deno-lint-ignore-file no-explicit-any -- /status is checked field by field.

import assert from "node:assert/strict";
import YAML from "yaml";
import { describePermission } from "../../src/kube/mod.ts";
import { localApi, UUID_V4, waitAllAssigned } from "../../dev/support/cluster_api.ts";
import { HubProcess } from "../../dev/support/hub_process.ts";
import { apiserverCa, apiserverUrl, kubectlOk, requireClusters, testNamespace } from "../support/mod.ts";

const CONTEXT = "dev";
const ROOT = new URL("../..", import.meta.url).pathname;

/**
 * deploy/cluster/namespaced (ServiceAccount, Role, RoleBinding) applied in `namespace`, its Role without the rules
 * `drop` matches; a token of its identity.
 */
async function roleOnlyToken(namespace: string, drop?: (rule: any) => boolean): Promise<string> {
  const built = await kubectlOk(CONTEXT, ["kustomize", `${ROOT}deploy/cluster/namespaced`]);
  const docs = YAML.parseAllDocuments(built).map((d) => d.toJS());
  for (const d of docs) if (d.kind === "Role" && drop) d.rules = d.rules.filter((r: any) => !drop(r));
  await kubectlOk(CONTEXT, ["apply", "-n", namespace, "-f", "-"], {
    stdin: docs.map((d) => YAML.stringify(d)).join("---\n"),
  });
  return (await kubectlOk(CONTEXT, ["create", "token", "operator-hub", "-n", namespace, "--duration=10m"])).trim();
}

/** A context on the shared API server, opted in to namespaced access unless `scoped` is false. */
function context(name: string, user: string, namespace: string, scoped = true): any {
  const extensions = scoped ? [{ name: "operator-hub", extension: { scope: "namespace" } }] : undefined;
  return { name, context: { cluster: "shared", user, namespace, ...(extensions ? { extensions } : {}) } };
}

Deno.test("Two namespaced contexts on one API server, each with only a Role, reconcile only their own namespace's Uuids; the same context without the opt-in is forbidden cluster-wide, and a Role without events is forbidden naming just that", async () => {
  requireClusters();
  const a = await testNamespace("tenant-a", { contexts: [CONTEXT] });
  const b = await testNamespace("tenant-b", { contexts: [CONTEXT] });
  const other = await testNamespace("tenant-none", { contexts: [CONTEXT] });
  const tmp = await Deno.makeTempDir({ prefix: "operator-hub-namespaced-" });
  const api = localApi(CONTEXT);
  let hub: HubProcess | undefined;
  try {
    const file = `${tmp}/tenants.yaml`;
    Deno.writeTextFileSync(
      file,
      YAML.stringify({
        apiVersion: "v1",
        kind: "Config",
        clusters: [{
          name: "shared",
          cluster: { server: apiserverUrl(CONTEXT), "certificate-authority-data": btoa(apiserverCa(CONTEXT)) },
        }],
        users: [
          { name: "tenant-a", user: { token: await roleOnlyToken(a.name) } },
          { name: "tenant-b", user: { token: await roleOnlyToken(b.name) } },
          { name: "tenant-c", user: { token: await roleOnlyToken(other.name, (r) => r.resources.includes("events")) } },
        ],
        contexts: [
          context("tenant-a", "tenant-a", a.name),
          context("tenant-b", "tenant-b", b.name),
          context("tenant-a-wide", "tenant-a", a.name, false),
          context("tenant-c", "tenant-c", other.name),
        ],
      }),
    );
    // kubectl reads the same file, extension and all, and the Role lets it list the tenant's own Uuids.
    const kubectl = await new Deno.Command("kubectl", {
      args: [`--kubeconfig=${file}`, "--context=tenant-a", "get", "uuid"],
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.equal(kubectl.code, 0, new TextDecoder().decode(kubectl.stderr));

    await api.createUuids(a.name, ["a-0", "a-1"]);
    await api.createUuids(b.name, ["b-0", "b-1", "b-2"]);
    await api.createUuids(other.name, ["x-0"]);
    hub = HubProcess.start({
      clusters: ["tenant-a", "tenant-b", "tenant-a-wide", "tenant-c"],
      kubeconfigs: [file],
      args: ["--operators", "uuid"],
    });
    const status = await hub.waitStatus(
      (s) =>
        s.clusters["tenant-a"]?.state === "watching" && s.clusters["tenant-b"]?.state === "watching" &&
        s.clusters["tenant-a-wide"]?.state === "forbidden" && s.clusters["tenant-c"]?.state === "forbidden",
      60_000,
      "both tenants watching, the wide context and the Role without events forbidden",
    );
    await waitAllAssigned(api, a.name, 2);
    await waitAllAssigned(api, b.name, 3);

    // Each cluster's cache holds its own namespace's objects and nothing else; /status names the namespace.
    const after = (await hub.get("/status")).body;
    for (const [name, ns, count] of [["tenant-a", a.name, 2], ["tenant-b", b.name, 3]] as const) {
      assert.equal(after.clusters[name].namespace, ns, `${name}: namespace`);
      assert.equal(after.clusters[name].objects, count, `${name}: objects`);
      assert.deepEqual(after.clusters[name].missingPermissions, [], `${name}: missingPermissions`);
    }
    // Without the opt-in the same Role-only identity is asked for cluster-wide rights, which it lacks.
    const wide = status.clusters["tenant-a-wide"];
    assert.equal(wide.namespace, undefined);
    assert.ok(
      wide.missingPermissions.includes(describePermission({ verb: "list", group: "demo.operator", resource: "uuid" })),
      JSON.stringify(wide.missingPermissions),
    );
    // A namespaced cluster's rules review does not hide a missing right: exactly the removed one is named.
    assert.deepEqual(status.clusters["tenant-c"].missingPermissions, [
      describePermission({ verb: "create", group: "", resource: "events", namespace: other.name }),
    ]);
    // Nobody serves the third namespace: its Uuid, created before the hub started, is still untouched.
    const untouched = await api.uuidsOf(other.name);
    assert.equal(untouched.size, 1);
    assert.ok(!UUID_V4.test(String(untouched.get("x-0") ?? "")), "x-0 got a UUID although no cluster watches it");
    assert.equal((await hub.stop()).code, 0, hub.tail());
  } finally {
    await hub?.kill();
    api.close();
    for (const ns of [a, b, other]) await ns.cleanup();
    await Deno.remove(tmp, { recursive: true });
  }
});

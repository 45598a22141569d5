// Tests of the Mirror operator's per-namespace rights in a registered cluster: the documents from deploy/ and the
// refusal of missing namespaces against the real local apiserver (read-only). A real registration with
// --mirror-namespaces, asked back with `kubectl auth can-i`, is tested in tests/production/cluster_add_rbac_test.ts.

import assert from "node:assert/strict";
import { inLocalNamespace } from "../../dev/support/local_client.ts";
import { mirrorRoleDocuments, requireNamespaces } from "./_mirror_roles.ts";
import { PATHS, RegistrationError } from "./_objects.ts";

const ROOT = new URL("../..", import.meta.url).pathname;

Deno.test("mirrorRoleDocuments gives deploy/mirror/namespace's Role and RoleBinding once per namespace, and nothing for none", async () => {
  assert.deepEqual(await mirrorRoleDocuments(ROOT, []), []);
  const docs = await mirrorRoleDocuments(ROOT, ["team-a", "team-b"]);
  assert.deepEqual(docs.map((d) => `${d.kind} ${d.metadata.namespace}/${d.metadata.name}`), [
    "Role team-a/operator-hub-mirror",
    "RoleBinding team-a/operator-hub-mirror",
    "Role team-b/operator-hub-mirror",
    "RoleBinding team-b/operator-hub-mirror",
  ]);
  const role = docs[0];
  assert.deepEqual(role.rules, [{
    apiGroups: [""],
    resources: ["configmaps", "secrets"],
    verbs: ["get", "list", "watch", "create", "patch", "delete"],
  }]);
  // The binding names the hub's ServiceAccount in its own namespace, whichever namespace the Role is in.
  assert.deepEqual(docs[1].subjects, [{ kind: "ServiceAccount", name: "operator-hub", namespace: "operator-hub" }]);
  assert.equal(PATHS.Role("r", "team-a"), "/apis/rbac.authorization.k8s.io/v1/namespaces/team-a/roles/r");
  // Copies, not shared objects: changing one namespace's document leaves the other's alone.
  docs[0].metadata.namespace = "changed";
  assert.equal(docs[2].metadata.namespace, "team-b");
});

Deno.test("requireNamespaces passes for existing namespaces and refuses missing ones, naming each and the cluster", () =>
  inLocalNamespace("prod", "mirror-roles", async (client, ns) => {
    await requireNamespaces(client, [ns, "default"], "prod");
    await assert.rejects(
      requireNamespaces(client, [ns, `${ns}-gone`, `${ns}-lost`], "prod"),
      (err: Error) => {
        assert.ok(err instanceof RegistrationError);
        assert.equal(
          err.message,
          `cannot grant the Mirror operator access in cluster "prod": namespace(s) ${ns}-gone, ${ns}-lost do not ` +
            `exist there (--mirror-namespaces names existing namespaces; the hub does not create them)`,
        );
        return true;
      },
    );
  }));

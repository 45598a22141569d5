// Unit tests for the catalogue of built-in kinds.
import assert from "node:assert/strict";
import { kindOf, kinds } from "./kinds.ts";

Deno.test("kinds holds the built-in kinds with their group, version, plural and scope, frozen", () => {
  assert.deepEqual(kinds.Deployment, {
    group: "apps",
    version: "v1",
    kind: "Deployment",
    plural: "deployments",
    namespaced: true,
  });
  assert.deepEqual(kinds.ResourceQuota, {
    group: "",
    version: "v1",
    kind: "ResourceQuota",
    plural: "resourcequotas",
    namespaced: true,
  });
  const clusterScoped = Object.values(kinds).filter((k) => k.namespaced === false).map((k) => k.kind).sort();
  assert.deepEqual(clusterScoped, ["ClusterRole", "ClusterRoleBinding", "Namespace"]);
  for (const [name, k] of Object.entries(kinds)) assert.equal(k.kind, name, "each entry is named after its kind");
  assert.ok(Object.isFrozen(kinds) && Object.isFrozen(kinds.Service));
});

Deno.test("kindOf() finds an entry by kind, checking apiVersion when given", () => {
  assert.equal(kindOf("apps/v1", "Deployment"), kinds.Deployment);
  assert.equal(kindOf(undefined, "Namespace"), kinds.Namespace);
  assert.equal(kindOf("v1", "Deployment"), undefined, "a Deployment is not core/v1");
  assert.equal(kindOf("v1", "Website"), undefined);
});

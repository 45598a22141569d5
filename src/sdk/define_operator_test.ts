// Unit tests for defineOperator(): what it passes on and which definitions it refuses.
import assert from "node:assert/strict";
import { permissionsFor } from "../runtime/mod.ts";
import { defineOperator } from "./define_operator.ts";

Deno.test("defineOperator() passes resourceClusters and onEngage on, and refuses a resourceClusters that is not a function", () => {
  const resource = { group: "examples.operator-hub.dev", version: "v1", kind: "FanOut", plural: "fanouts" };
  const reconcile = () => Promise.resolve();
  const onEngage = (cluster: string) => [{ cluster: "prod", namespace: "default", name: cluster }];
  const op = defineOperator({ name: "fan-out", resource, resourceClusters: (c) => c === "prod", onEngage, reconcile });
  assert.equal(op.resourceClusters?.("prod"), true);
  assert.equal(op.resourceClusters?.("dev"), false);
  assert.deepEqual(op.onEngage?.("dev", () => []), [{ cluster: "prod", namespace: "default", name: "dev" }]);
  assert.equal(defineOperator({ name: "plain", resource, reconcile }).resourceClusters, undefined);
  assert.throws(
    // deno-lint-ignore no-explicit-any -- a JavaScript caller's mistake
    () => defineOperator({ name: "bad", resource, resourceClusters: "prod" as any, reconcile }),
    /operator bad: resourceClusters must be a function \(cluster name → boolean\), got string/,
  );
});

Deno.test("defineOperator() turns owns into label-selected watches and adds an owned kind's verbs to its uses entry", () => {
  const resource = { group: "examples.operator-hub.dev", version: "v1", kind: "Website", plural: "websites" };
  const deployments = { group: "apps", version: "v1", kind: "Deployment", plural: "deployments" };
  const configMaps = { group: "", version: "v1", kind: "ConfigMap", plural: "configmaps" };
  const op = defineOperator({
    name: "site",
    resource,
    uses: [{ type: deployments, verbs: ["get"] }],
    owns: [{ type: deployments, verbs: ["create", "get"] }, configMaps],
    reconcile: () => Promise.resolve(),
  });
  assert.deepEqual(op.uses.map((u) => [u.type.plural, [...u.verbs]]), [["deployments", ["get", "create"]]]);
  assert.deepEqual(op.watches?.map((w) => [w.type.plural, w.labelSelector]), [
    ["deployments", "operator-hub.dev/parent-resource=websites.examples.operator-hub.dev"],
    ["configmaps", "operator-hub.dev/parent-resource=websites.examples.operator-hub.dev"],
  ]);
  assert.throws(
    // deno-lint-ignore no-explicit-any -- a JavaScript caller's mistake
    () => defineOperator({ name: "bad", resource, owns: ["deployments" as any], reconcile: () => Promise.resolve() }),
    /operator bad: owns\[0\] is not a resource type/,
  );
});

Deno.test("defineOperator() passes metadataOnly on for owned and watched kinds, and refuses one that is not a boolean", () => {
  const resource = { group: "examples.operator-hub.dev", version: "v1", kind: "Website", plural: "websites" };
  const configMaps = { group: "", version: "v1", kind: "ConfigMap", plural: "configmaps" };
  const secrets = { group: "", version: "v1", kind: "Secret", plural: "secrets" };
  const reconcile = () => Promise.resolve();
  const op = defineOperator({
    name: "site",
    resource,
    owns: [{ type: configMaps, metadataOnly: true }, secrets],
    watches: [{ type: secrets, metadataOnly: true, map: () => [] }],
    reconcile,
  });
  assert.deepEqual(op.watches?.map((w) => [w.type.plural, w.metadataOnly ?? false]), [
    ["secrets", true],
    ["configmaps", true],
    ["secrets", false],
  ]);
  assert.throws(
    () =>
      defineOperator({
        name: "bad",
        resource,
        owns: [{ type: configMaps, metadataOnly: "yes" as unknown as boolean }],
        reconcile,
      }),
    /operator bad: owns\[0\]\.metadataOnly must be true or false, got "yes"/,
  );
  assert.throws(
    () =>
      defineOperator({
        name: "bad",
        resource,
        watches: [{ type: secrets, metadataOnly: 1 as unknown as boolean, map: () => [] }],
        reconcile,
      }),
    /operator bad: watches\[0\]\.metadataOnly must be true or false, got 1/,
  );
  assert.throws(
    () =>
      defineOperator({
        name: "bad",
        resource,
        owns: [{ type: configMaps, acrossClusters: "no" as unknown as boolean }],
        reconcile,
      }),
    /operator bad: owns\[0\]\.acrossClusters must be true or false, got "no"/,
  );
});

Deno.test("defineOperator() with owns marks the operator as adopting, so the pre-flight checks update of <plural>/finalizers", () => {
  const resource = {
    group: "examples.operator-hub.dev",
    version: "v1",
    kind: "Tenant",
    plural: "tenants",
    namespaced: false,
  };
  const namespaces = { group: "", version: "v1", kind: "Namespace", plural: "namespaces", namespaced: false };
  const reconcile = () => Promise.resolve();
  const owning = defineOperator({
    name: "tenants",
    resource,
    owns: [{ type: namespaces, verbs: ["create"] }],
    reconcile,
  });
  assert.equal(owning.adopts, true);
  const checks = permissionsFor(owning, { statusSubresource: true, namespaces: [] });
  assert.deepEqual(checks.filter((c) => c.subresource === "finalizers"), [
    { verb: "update", group: "examples.operator-hub.dev", resource: "tenants", subresource: "finalizers" },
  ]);
  assert.equal(defineOperator({ name: "plain", resource, reconcile }).adopts, undefined);
});

Deno.test("defineOperator() with reads keeps only the declared fields, and refuses bad paths and reads beside project", () => {
  const resource = { group: "examples.operator-hub.dev", version: "v1", kind: "Greeting", plural: "greetings" };
  const reconcile = () => Promise.resolve();
  const op = defineOperator({ name: "greeting", resource, reads: ["spec.name"], reconcile });
  assert.deepEqual(op.reads, ["spec.name"]);
  const raw = {
    metadata: { name: "g", namespace: "web", resourceVersion: "3" },
    spec: { name: "Ada", x: 1 },
    status: {},
  };
  assert.deepEqual(op.project?.(raw), {
    metadata: { name: "g", namespace: "web", resourceVersion: "3", uid: undefined, generation: undefined },
    spec: { name: "Ada" },
  });
  assert.equal(defineOperator({ name: "plain", resource, reconcile }).reads, undefined);
  assert.throws(
    () => defineOperator({ name: "bad", resource, reads: ["spec..name"], reconcile }),
    /operator bad: reads: "spec\.\.name" is not a field path/,
  );
  assert.throws(
    () =>
      defineOperator({
        name: "both",
        resource,
        reads: ["spec"],
        project: (r) => ({ metadata: { name: "" }, r }),
        reconcile,
      }),
    /operator both: give reads or project, not both/,
  );
});

import assert from "node:assert/strict";
import { type Operator, permissionsFor } from "./operator.ts";

const op = (verbs: Operator["verbs"], extra: Partial<Operator> = {}): Operator => ({
  name: "uuid",
  resource: { group: "demo.operator", version: "v1", kind: "Uuid", plural: "uuid" },
  verbs,
  events: true,
  uses: [],
  reconciler: { reconcile: () => Promise.resolve() },
  ...extra,
});

Deno.test("permissionsFor() derives list, watch, the declared verbs and create events, patchStatus through /status", () => {
  const checks = permissionsFor(op(["get", "patchStatus"]), { statusSubresource: true, namespaces: [] });
  assert.deepEqual(checks.map((c) => `${c.verb} ${c.resource}${c.subresource ? "/" + c.subresource : ""}`), [
    "list uuid",
    "watch uuid",
    "get uuid",
    "patch uuid/status",
    "create events",
  ]);
});

Deno.test("permissionsFor() checks patch of the object itself when the CRD has no status subresource", () => {
  const checks = permissionsFor(op(["patchStatus"], { events: false }), { statusSubresource: false, namespaces: [] });
  assert.deepEqual(checks, [
    { verb: "list", group: "demo.operator", resource: "uuid" },
    { verb: "watch", group: "demo.operator", resource: "uuid" },
    { verb: "patch", group: "demo.operator", resource: "uuid" },
  ]);
});

Deno.test("permissionsFor() repeats namespaced checks per namespace and keeps cluster-scoped ones once", () => {
  const namespaces = { group: "", version: "v1", kind: "Namespace", plural: "namespaces", namespaced: false };
  const checks = permissionsFor(op(["apply"], { events: false, uses: [{ type: namespaces, verbs: ["get"] }] }), {
    statusSubresource: true,
    namespaces: ["a", "b"],
  });
  assert.deepEqual(checks.map((c) => `${c.verb} ${c.resource} ${c.namespace ?? "*"}`), [
    "list uuid a",
    "list uuid b",
    "watch uuid a",
    "watch uuid b",
    "create uuid a",
    "create uuid b",
    "patch uuid a",
    "patch uuid b",
    "get namespaces *",
  ]);
});

Deno.test("permissionsFor() checks create and patch for apply, of the own resource and of a used one, so an apply that creates is covered", () => {
  const configMaps = { group: "", version: "v1", kind: "ConfigMap", plural: "configmaps" };
  const checks = permissionsFor(op(["apply"], { events: false, uses: [{ type: configMaps, verbs: ["apply"] }] }), {
    statusSubresource: true,
    namespaces: [],
  });
  assert.deepEqual(checks.map((c) => `${c.verb} ${c.resource}`), [
    "list uuid",
    "watch uuid",
    "create uuid",
    "patch uuid",
    "create configmaps",
    "patch configmaps",
  ]);
});

Deno.test("permissionsFor() checks list and watch of every watched resource", () => {
  const configMaps = { group: "", version: "v1", kind: "ConfigMap", plural: "configmaps" };
  const checks = permissionsFor(op([], { events: false, watches: [{ type: configMaps, map: () => [] }] }), {
    statusSubresource: true,
    namespaces: [],
  });
  assert.deepEqual(checks.map((c) => `${c.verb} ${c.resource}`), [
    "list uuid",
    "watch uuid",
    "list configmaps",
    "watch configmaps",
  ]);
});

Deno.test("permissionsFor() in a cluster its resourceClusters refuses checks only its uses and the watches run there", () => {
  const configMaps = { group: "", version: "v1", kind: "ConfigMap", plural: "configmaps" };
  const secrets = { group: "", version: "v1", kind: "Secret", plural: "secrets" };
  const homeOnly = op(["patchStatus"], {
    resourceClusters: (cluster) => cluster === "prod",
    uses: [{ type: configMaps, verbs: ["get", "apply"] }],
    watches: [
      { type: configMaps, labelSelector: "copy=true", map: () => [] },
      { type: secrets, clusters: (cluster) => cluster === "prod", map: () => [] },
    ],
  });
  const options = { statusSubresource: true, namespaces: [] };
  const named = (cluster: string) =>
    permissionsFor(homeOnly, { ...options, cluster }).map((c) =>
      `${c.verb} ${c.resource}${c.subresource ? `/${c.subresource}` : ""}`
    );
  assert.deepEqual(named("staging"), [
    "get configmaps",
    "create configmaps",
    "patch configmaps",
    "list configmaps",
    "watch configmaps",
  ]);
  assert.deepEqual(named("prod"), [
    "list uuid",
    "watch uuid",
    "patch uuid/status",
    "create events",
    "get configmaps",
    "create configmaps",
    "patch configmaps",
    "list configmaps",
    "watch configmaps",
    "list secrets",
    "watch secrets",
  ]);
  // Without a cluster, everything it may need anywhere (what deploy/'s ClusterRole grants).
  assert.deepEqual(permissionsFor(homeOnly, options).length, named("prod").length);
});

Deno.test("permissionsFor() checks a use or watch with its own namespaces only there, and skips a per-object watch", () => {
  const cm = { group: "", version: "v1", kind: "ConfigMap", plural: "configmaps" };
  const secrets = { group: "", version: "v1", kind: "Secret", plural: "secrets" };
  const checks = permissionsFor(
    op([], {
      events: false,
      uses: [{ type: cm, verbs: ["create"], namespaces: ["apps", "shared"] }],
      watches: [
        { type: cm, namespaces: ["apps"], map: () => [] },
        { type: secrets, objects: () => [], map: () => [] },
      ],
    }),
    { statusSubresource: true, namespaces: ["hub-ns"] },
  );
  assert.deepEqual(checks.map((c) => `${c.verb} ${c.resource} ${c.namespace ?? "*"}`), [
    "list uuid hub-ns",
    "watch uuid hub-ns",
    "create configmaps apps",
    "create configmaps shared",
    "list configmaps apps",
    "watch configmaps apps",
  ]);
});

Deno.test("permissionsFor() checks update of <plural>/finalizers of its own resource when it adopts children (blockOwnerDeletion)", () => {
  const adopting = permissionsFor(op(["patchStatus"], { events: false, adopts: true }), {
    statusSubresource: true,
    namespaces: ["a"],
  });
  assert.deepEqual(
    adopting.map((c) => `${c.verb} ${c.resource}${c.subresource ? "/" + c.subresource : ""} ${c.namespace}`),
    [
      "list uuid a",
      "watch uuid a",
      "patch uuid/status a",
      "update uuid/finalizers a",
    ],
  );
  const other = permissionsFor(
    op(["patchStatus"], { events: false, adopts: true, resourceClusters: (c) => c === "prod" }),
    {
      statusSubresource: true,
      namespaces: [],
      cluster: "dev",
    },
  );
  assert.deepEqual(other, [], "no parent lives in a cluster its resource is not in: no finalizers check there");
  const plain = permissionsFor(op(["patchStatus"], { events: false }), { statusSubresource: true, namespaces: [] });
  assert.ok(!plain.some((c) => c.subresource === "finalizers"), "no children adopted: no finalizers check");
});

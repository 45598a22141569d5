// Unit tests of the Mirror operator's wiring: where it acts, what it watches and how each change maps to Mirrors.
// Its reconciles against real clusters are tested end to end in tests/mirror_test.ts and tests/mirror_clusters_test.ts.

import assert from "node:assert/strict";
import type { ReconcileScope, StoredObject } from "../../sdk/mod.ts";
import { ANNOTATIONS, MIRROR_LABEL, MIRROR_LABEL_VALUE } from "./copy.ts";
import { MIRROR_RESOURCE, mirrorOperator, selectTargets } from "./mirror_operator.ts";

const op = mirrorOperator({ homeCluster: "home" });

function mirror(name: string, namespace: string, spec: unknown): StoredObject {
  return { metadata: { name, namespace }, spec } as StoredObject;
}

const MIRRORS = [
  mirror("m1", "apps", { source: { kind: "ConfigMap", name: "settings" }, clusters: ["edge"] }),
  mirror("m2", "apps", { source: { kind: "Secret", name: "settings" }, clusters: ["*"] }),
  mirror("m3", "other", { source: { kind: "ConfigMap", name: "settings" }, clusters: ["dev"] }),
];
const cached = (c: string) => (c === "home" ? MIRRORS : []);

Deno.test("The Mirror operator owns Mirrors in the home cluster only", () => {
  assert.deepEqual(op.resource, MIRROR_RESOURCE);
  assert.equal(op.resourceClusters?.("home"), true);
  assert.equal(op.resourceClusters?.("edge"), false);
});

Deno.test("A cluster engaged later queues every home Mirror that selects it by name or with *, and the home cluster none", () => {
  const keys = (cluster: string) => op.onEngage!(cluster, cached).map((r) => `${r.cluster}:${r.namespace}/${r.name}`);
  assert.deepEqual(keys("edge"), ["home:apps/m1", "home:apps/m2"]);
  assert.deepEqual(keys("dev"), ["home:apps/m2", "home:other/m3"]);
  assert.deepEqual(keys("home"), []);
});

Deno.test("A source change in the home cluster maps to the Mirrors of that kind and name in its namespace", () => {
  const [cmSource, secretSource] = op.watches!.filter((w) => !w.labelSelector);
  assert.equal(cmSource.type.kind, "ConfigMap");
  assert.equal(cmSource.clusters?.("home"), true);
  assert.equal(cmSource.clusters?.("edge"), false, "sources are read in the home cluster only");
  assert.deepEqual(op.watches!.map((w) => w.metadataOnly), [true, true, true, true], "every watch metadata-only");
  const changed = { metadata: { name: "settings", namespace: "apps" } } as StoredObject;
  assert.deepEqual(cmSource.map(changed, "home", cached), [{ cluster: "home", namespace: "apps", name: "m1" }]);
  assert.deepEqual(secretSource.map(changed, "home", cached), [{ cluster: "home", namespace: "apps", name: "m2" }]);
  const unrelated = { metadata: { name: "other", namespace: "apps" } } as StoredObject;
  assert.deepEqual(cmSource.map(unrelated, "home", cached), []);
});

Deno.test("A labelled copy changed in a target maps back to its Mirror; copies of another home or unlabelled are ignored", () => {
  const copies = op.watches!.filter((w) => w.labelSelector);
  assert.equal(copies.length, 2);
  for (const w of copies) assert.equal(w.labelSelector, `${MIRROR_LABEL}=${MIRROR_LABEL_VALUE}`);
  const copy = (sourceCluster: string, labelled = true) =>
    ({
      metadata: {
        name: "settings",
        namespace: "apps",
        labels: labelled ? { [MIRROR_LABEL]: MIRROR_LABEL_VALUE } : {},
        annotations: { [ANNOTATIONS.mirror]: "apps/m1", [ANNOTATIONS.sourceCluster]: sourceCluster },
      },
    }) as unknown as StoredObject;
  assert.deepEqual(copies[0].map(copy("home"), "edge", cached), [{ cluster: "home", namespace: "apps", name: "m1" }]);
  assert.deepEqual(copies[0].map(copy("another-hub-home"), "edge", cached), []);
  assert.deepEqual(copies[0].map(copy("home", false), "edge", cached), []);
});

Deno.test("selectTargets: named clusters without the home cluster, sorted and unique; * is every engaged cluster but home", () => {
  const scope = { clusters: () => ["home", "zeta", "alpha"] } as Pick<ReconcileScope, "clusters">;
  assert.deepEqual(selectTargets(["b", "a", "b", "home"], scope, "home"), ["a", "b"]);
  assert.deepEqual(selectTargets(["*"], scope, "home"), ["alpha", "zeta"]);
});

Deno.test("The Mirror operator's reconcile does nothing for a request outside the home cluster", async () => {
  const untouchable = new Proxy({}, {
    get: (_t, p) => {
      throw new Error(`scope.${String(p)} used`);
    },
  }) as ReconcileScope;
  assert.equal(
    await op.reconciler.reconcile({ cluster: "edge", namespace: "apps", name: "m1" }, untouchable),
    undefined,
  );
});

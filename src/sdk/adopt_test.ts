// Unit tests for adopt(), parentRequests() and ownedWatch(): owner references, scopes, labels, the requeue mapping.
import assert from "node:assert/strict";
import type { ResourceType } from "../kube/mod.ts";
import { TerminalError } from "../runtime/mod.ts";
import {
  adopt,
  labelValue,
  ownedWatch,
  PARENT_ANNOTATION,
  PARENT_NAME_LABEL,
  PARENT_RESOURCE_LABEL,
  parentRequests,
} from "./adopt.ts";
import { kinds } from "./kinds.ts";

const WEBSITES: ResourceType = {
  group: "examples.operator-hub.dev",
  version: "v1",
  kind: "Website",
  plural: "websites",
};
const TENANTS: ResourceType = {
  group: "examples.operator-hub.dev",
  version: "v1",
  kind: "Tenant",
  plural: "tenants",
  namespaced: false,
};
const site = { object: { metadata: { name: "site", namespace: "web", uid: "u-1" } }, type: WEBSITES, cluster: "prod" };

Deno.test("adopt() sets a controller owner reference, the parent's namespace and the labels and annotation naming the parent", () => {
  const child = adopt({ metadata: { name: "site", labels: { app: "site" } }, data: {} }, site, {
    type: kinds.ConfigMap,
  });
  assert.deepEqual(child.metadata, {
    name: "site",
    namespace: "web",
    labels: {
      app: "site",
      [PARENT_RESOURCE_LABEL]: "websites.examples.operator-hub.dev",
      [PARENT_NAME_LABEL]: "site",
    },
    annotations: { [PARENT_ANNOTATION]: "prod/web/site" },
    ownerReferences: [{
      apiVersion: "examples.operator-hub.dev/v1",
      kind: "Website",
      name: "site",
      uid: "u-1",
      controller: true,
      blockOwnerDeletion: true,
    }],
  });
  // Twice is once: a level-based handler adopts the same child on every pass.
  assert.equal(adopt(child, site).metadata.ownerReferences?.length, 1);
});

Deno.test("adopt() sets no owner reference where Kubernetes cannot honour it: another cluster, another namespace, a cluster-scoped child of a namespaced parent", () => {
  const remote = adopt({ metadata: { name: "a" } }, site, { cluster: "dev" });
  assert.equal(remote.metadata.ownerReferences, undefined);
  assert.equal(remote.metadata.namespace, "web", "the namespace still defaults to the parent's");
  assert.equal(remote.metadata.annotations[PARENT_ANNOTATION], "prod/web/site");
  const elsewhere = adopt({ metadata: { name: "b", namespace: "other" } }, site);
  assert.equal(elsewhere.metadata.ownerReferences, undefined);
  assert.equal(elsewhere.metadata.namespace, "other");
  const ns = adopt({ metadata: { name: "c" } }, site, { type: kinds.Namespace });
  assert.equal(ns.metadata.ownerReferences, undefined);
  assert.equal(ns.metadata.namespace, undefined, "a cluster-scoped child gets no namespace");
  // The child's kind found in `kinds` when no type is given.
  const byKind = adopt({ apiVersion: "v1", kind: "Namespace", metadata: { name: "d" } }, site);
  assert.equal(byKind.metadata.namespace, undefined);
});

Deno.test("adopt() under a cluster-scoped parent owns a cluster-scoped child and a namespaced one in any namespace", () => {
  const tenant = { object: { metadata: { name: "acme", uid: "t-1" } }, type: TENANTS, cluster: "prod" };
  const ns = adopt({ metadata: { name: "acme" } }, tenant, { type: kinds.Namespace });
  assert.equal(ns.metadata.ownerReferences?.[0].uid, "t-1");
  const quota = adopt({ metadata: { name: "q", namespace: "acme" } }, tenant, { type: kinds.ResourceQuota });
  assert.equal(quota.metadata.ownerReferences?.[0].kind, "Tenant");
  assert.equal(quota.metadata.annotations[PARENT_ANNOTATION], "prod//acme");
});

Deno.test("adopt() refuses a child controlled by another object and a parent without a uid", () => {
  const taken = {
    metadata: {
      name: "x",
      ownerReferences: [{ apiVersion: "apps/v1", kind: "ReplicaSet", name: "rs", uid: "other", controller: true }],
    },
  };
  assert.throws(
    () => adopt(taken, site),
    (e: Error) => e instanceof TerminalError && /already controlled by ReplicaSet rs \(uid other\)/.test(e.message),
  );
  assert.throws(() => adopt({ metadata: { name: "y" } }, { ...site, object: { metadata: { name: "s" } } }), /no uid/);
});

Deno.test("labelValue() keeps a valid label value and hashes anything else into one, stably", () => {
  assert.equal(labelValue("websites.examples.operator-hub.dev"), "websites.examples.operator-hub.dev");
  const long = "a".repeat(80);
  const hashed = labelValue(long);
  assert.equal(hashed.length, 63);
  assert.match(hashed, /^a{54}-[0-9a-f]{8}$/);
  assert.equal(labelValue(long), hashed);
  assert.notEqual(labelValue("a".repeat(81)), hashed);
  assert.match(labelValue("prod/ns"), /^prod-ns-[0-9a-f]{8}$/);
});

Deno.test("parentRequests() maps a child to its parent by the controller owner reference, else by the annotation of a labelled child", () => {
  const owned = {
    metadata: {
      name: "site",
      namespace: "web",
      ownerReferences: [{
        apiVersion: "examples.operator-hub.dev/v1",
        kind: "Website",
        name: "site",
        uid: "u-1",
        controller: true,
      }],
    },
  };
  assert.deepEqual(parentRequests(WEBSITES, owned, "staging"), [{
    cluster: "staging",
    namespace: "web",
    name: "site",
  }]);
  const foreign = {
    metadata: { ...owned.metadata, ownerReferences: [{ ...owned.metadata.ownerReferences[0], kind: "Blog" }] },
  };
  assert.deepEqual(parentRequests(WEBSITES, foreign, "prod"), [], "controlled by another kind: not ours");
  const remote = adopt({ metadata: { name: "r" } }, { ...site, cluster: "team/prod" }, { cluster: "dev" });
  assert.deepEqual(parentRequests(WEBSITES, { metadata: { ...remote.metadata } }, "dev"), [
    { cluster: "team/prod", namespace: "web", name: "site" },
  ]);
  const unlabelled = { metadata: { name: "u", annotations: { [PARENT_ANNOTATION]: "prod/web/site" } } };
  assert.deepEqual(parentRequests(WEBSITES, unlabelled, "prod"), [], "an annotation without the label is not followed");
  const tenantChild = adopt({ metadata: { name: "acme" } }, {
    object: { metadata: { name: "acme", uid: "t" } },
    type: TENANTS,
    cluster: "prod",
  }, { type: kinds.Namespace });
  assert.deepEqual(parentRequests(TENANTS, { metadata: { ...tenantChild.metadata } }, "prod"), [
    { cluster: "prod", namespace: "", name: "acme" },
  ]);
});

Deno.test("ownedWatch() selects the parent's label, keeps owner references in its cache and maps changes to the parent", () => {
  const w = ownedWatch(WEBSITES, { type: kinds.Deployment, clusters: (c) => c !== "dev" });
  assert.equal(w.labelSelector, `${PARENT_RESOURCE_LABEL}=websites.examples.operator-hub.dev`);
  assert.equal(w.type, kinds.Deployment);
  assert.deepEqual(["prod", "dev"].map((c) => w.clusters!(c)), [true, false]);
  const raw = adopt({ metadata: { name: "site" }, spec: { replicas: 1 } }, site, { type: kinds.Deployment });
  const cached = w.project!({
    ...raw,
    metadata: { ...raw.metadata, uid: "d-1", resourceVersion: "7", managedFields: [] },
  });
  assert.equal(cached.spec, undefined, "the cache keeps no spec of a child");
  assert.deepEqual(w.map(cached, "prod", () => []), [{ cluster: "prod", namespace: "web", name: "site" }]);
});

Deno.test("ownedWatch() with metadataOnly watches PartialObjectMetadata and maps a served one to the parent", () => {
  assert.equal(ownedWatch(WEBSITES, { type: kinds.ConfigMap }).metadataOnly, undefined, "opt-in");
  const w = ownedWatch(WEBSITES, { type: kinds.ConfigMap, metadataOnly: true });
  assert.equal(w.metadataOnly, true);
  const raw = adopt({ metadata: { name: "site" }, data: { a: "1" } }, site, { type: kinds.ConfigMap });
  const served = {
    apiVersion: "meta.k8s.io/v1",
    kind: "PartialObjectMetadata",
    metadata: { ...raw.metadata, uid: "c" },
  };
  const cached = w.project!(served);
  assert.deepEqual(w.map(cached, "prod", () => []), [{ cluster: "prod", namespace: "web", name: "site" }]);
});

Deno.test("ownedWatch() runs only where a parent exists, unless its children live across clusters; adopt() into another cluster is refused for a kind owned without acrossClusters", () => {
  const counts: Record<string, number> = { prod: 2, dev: 0 };
  const count = (c: string) => counts[c] ?? 0;
  const sameCluster = ownedWatch(WEBSITES, { type: kinds.ConfigMap });
  assert.deepEqual(["prod", "dev"].map((c) => sameCluster.neededIn!(c, () => [], count)), [true, false]);
  assert.equal(ownedWatch(WEBSITES, { type: kinds.ConfigMap, acrossClusters: true }).neededIn, undefined);

  const owned = { ...site, owns: [{ type: kinds.ConfigMap }, kinds.Secret] };
  assert.throws(
    () => adopt({ metadata: { name: "a" } }, owned, { type: kinds.ConfigMap, cluster: "dev" }),
    (err: Error) =>
      err instanceof TerminalError &&
      /cannot adopt ConfigMap a into cluster dev: .*acrossClusters: true/.test(err.message),
  );
  assert.throws(() => adopt({ metadata: { name: "b" } }, owned, { type: kinds.Secret, cluster: "dev" }), TerminalError);
  const across = { ...site, owns: [{ type: kinds.ConfigMap, acrossClusters: true }] };
  assert.equal(
    adopt({ metadata: { name: "c" } }, across, { type: kinds.ConfigMap, cluster: "dev" }).metadata.name,
    "c",
  );
  // Same cluster, or a kind the operator does not own: as before.
  assert.equal(
    adopt({ metadata: { name: "d" } }, owned, { type: kinds.ConfigMap }).metadata.ownerReferences?.length,
    1,
  );
  assert.equal(
    adopt({ metadata: { name: "e" } }, owned, { type: kinds.Deployment, cluster: "dev" }).metadata.name,
    "e",
  );
});

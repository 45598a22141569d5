import assert from "node:assert/strict";
import { ANNOTATIONS, copyDiff, desiredCopy, MIRROR_LABEL, mirrorOf, projectContent } from "./copy.ts";

const source = projectContent({
  metadata: { name: "settings", namespace: "app", resourceVersion: "42", managedFields: [{}] },
  data: { color: "blue" },
});

Deno.test("desiredCopy labels the copy and names its source cluster, namespace, name, resourceVersion and Mirror", () => {
  const copy = desiredCopy({ cluster: "prod", object: source, mirror: "app/settings" }, "target");
  assert.deepEqual(copy.metadata.namespace, "target");
  assert.equal((copy.metadata.labels as Record<string, string>)[MIRROR_LABEL], "copy");
  assert.deepEqual(copy.metadata.annotations, {
    [ANNOTATIONS.sourceCluster]: "prod",
    [ANNOTATIONS.sourceNamespace]: "app",
    [ANNOTATIONS.sourceName]: "settings",
    [ANNOTATIONS.sourceResourceVersion]: "42",
    [ANNOTATIONS.mirror]: "app/settings",
  });
  assert.deepEqual(copy.data, { color: "blue" });
  assert.deepEqual(mirrorOf(projectContent(copy as never)), { cluster: "prod", namespace: "app", name: "settings" });
});

Deno.test("copyDiff finds nothing to do for an equal copy, an apply for a changed value, and extra keys to remove", () => {
  const desired = desiredCopy({ cluster: "prod", object: source, mirror: "app/settings" }, "app");
  const same = projectContent({ ...desired, metadata: { ...desired.metadata, resourceVersion: "7" } });
  assert.equal(copyDiff(same, desired), undefined);
  assert.deepEqual(copyDiff(undefined, desired), { apply: true, extraKeys: {} });
  assert.deepEqual(copyDiff({ ...same, data: { color: "red" } }, desired), { apply: true, extraKeys: {} });
  assert.deepEqual(copyDiff({ ...same, data: { color: "blue", extra: "x" } }, desired), {
    apply: false,
    extraKeys: { data: ["extra"] },
  });
});

Deno.test("mirrorOf ignores objects without the hub's label", () => {
  assert.equal(mirrorOf(source), undefined);
});

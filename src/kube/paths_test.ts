// Tests for resource path building.

import assert from "node:assert/strict";
import { namespacePath, resourcePath } from "./paths.ts";

const UUID = { group: "demo.operator", version: "v1", plural: "uuid" };

Deno.test("resourcePath() builds collection, object and subresource paths for a namespaced custom resource", () => {
  assert.equal(resourcePath(UUID), "/apis/demo.operator/v1/uuid");
  assert.equal(resourcePath({ ...UUID, namespace: "a" }), "/apis/demo.operator/v1/namespaces/a/uuid");
  assert.equal(
    resourcePath({ ...UUID, namespace: "a", name: "x", subresource: "status" }),
    "/apis/demo.operator/v1/namespaces/a/uuid/x/status",
  );
});

Deno.test("resourcePath() uses /api/v1 for the core group and encodes segments", () => {
  assert.equal(
    resourcePath({ group: "", version: "v1", plural: "events", namespace: "n s" }),
    "/api/v1/namespaces/n%20s/events",
  );
  assert.equal(namespacePath("a"), "/api/v1/namespaces/a");
  assert.equal(namespacePath(), "/api/v1/namespaces");
});

Deno.test("resourcePath() refuses a subresource without an object name", () => {
  assert.throws(() => resourcePath({ ...UUID, subresource: "status" }), TypeError);
});

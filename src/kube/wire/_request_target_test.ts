// Tests for requestTarget: a request's path and query string.

import assert from "node:assert/strict";
import { requestTarget } from "./_request_target.ts";

Deno.test("requestTarget() adds a leading slash and leaves a path without query as it is", () => {
  assert.equal(requestTarget("api/v1/pods"), "/api/v1/pods");
  assert.equal(requestTarget("/api/v1/pods"), "/api/v1/pods");
  assert.equal(requestTarget("/api/v1/pods", {}), "/api/v1/pods");
});

Deno.test("requestTarget() appends the query in insertion order, skipping undefined values and encoding the rest", () => {
  assert.equal(
    requestTarget("/apis/demo.operator/v1/uuid", {
      watch: "true",
      resourceVersion: undefined,
      timeoutSeconds: 300,
      allowWatchBookmarks: true,
      labelSelector: "app in (a,b),tier!=db",
    }),
    "/apis/demo.operator/v1/uuid?watch=true&timeoutSeconds=300&allowWatchBookmarks=true&labelSelector=app+in+%28a%2Cb%29%2Ctier%21%3Ddb",
  );
});

Deno.test("requestTarget() continues a path's own query string with & and adds nothing when every value is undefined", () => {
  assert.equal(requestTarget("/api/v1/pods?limit=5", { continue: "abc=" }), "/api/v1/pods?limit=5&continue=abc%3D");
  assert.equal(requestTarget("/api/v1/pods", { continue: undefined }), "/api/v1/pods");
});

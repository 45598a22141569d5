// Unit tests for what src/runtime/resource_client.ts defines beside the ResourceClient interface.
import assert from "node:assert/strict";
import { ApiError } from "../kube/mod.ts";
import { ignoreNotFound } from "./resource_client.ts";

Deno.test("ignoreNotFound turns a 404 into undefined and rethrows anything else", async () => {
  const notFound = new ApiError({ method: "GET", path: "/x", status: 404 });
  assert.equal(await Promise.reject(notFound).catch(ignoreNotFound), undefined);
  const forbidden = new ApiError({ method: "GET", path: "/x", status: 403 });
  await assert.rejects(Promise.reject(forbidden).catch(ignoreNotFound), (err) => err === forbidden);
});

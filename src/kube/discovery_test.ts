// Tests of resource discovery: against the real local apiserver (context prod of clusters/local.yaml, read-only), and
// the error mapping with an injected client for answers a healthy apiserver does not give.
import assert from "node:assert/strict";
import { discoverResource, type DiscoveryClient, MissingResourceError } from "./discovery.ts";
import { ApiError } from "./errors.ts";
import { localKubeClient } from "../../dev/support/local_client.ts";

/** A client for context prod; fails with how to start the clusters when they are not running. */
const prod = () => localKubeClient("prod");

Deno.test("discoverResource finds the status subresource of pods and deployments, and none for configmaps, on a real apiserver", async () => {
  const client = await prod();
  try {
    const core = (plural: string, kind: string) => ({ group: "", version: "v1", kind, plural });
    assert.deepEqual(await discoverResource(client, "prod", core("pods", "Pod")), { statusSubresource: true });
    assert.deepEqual(await discoverResource(client, "prod", core("configmaps", "ConfigMap")), {
      statusSubresource: false,
    });
    const deployments = { group: "apps", version: "v1", kind: "Deployment", plural: "deployments" };
    assert.deepEqual(await discoverResource(client, "prod", deployments), { statusSubresource: true });
  } finally {
    client.close();
  }
});

Deno.test("discoverResource says which resource a real apiserver does not serve and how to fix it, as a 404", async () => {
  const client = await prod();
  try {
    const missingGroup = { group: "nope.operator-hub.test", version: "v1", kind: "Nope", plural: "nopes" };
    await assert.rejects(discoverResource(client, "prod", missingGroup), (err: Error) => {
      assert.ok(err instanceof MissingResourceError);
      assert.equal(err.status, 404);
      assert.equal(
        err.message,
        "cluster prod does not serve Nope (nopes.nope.operator-hub.test/v1, apiVersion nope.operator-hub.test/v1): " +
          "install its CRD; retrying",
      );
      assert.equal((err.cause as ApiError).status, 404, "the apiserver's 404 is chained");
      return true;
    });
    const missingPlural = { group: "", version: "v1", kind: "Widget", plural: "widgets" };
    await assert.rejects(
      discoverResource(client, "prod", missingPlural),
      /cluster prod does not serve Widget \(widgets\/v1/,
    );
  } finally {
    client.close();
  }
});

Deno.test("discoverResource passes failures other than a 404 through unchanged, including a 404 that means Forbidden", async () => {
  const failing = (err: unknown): DiscoveryClient => ({ request: () => Promise.reject(err) });
  const type = { group: "g", version: "v1", kind: "K", plural: "ks" };
  for (
    const err of [
      new ApiError({ method: "GET", path: "/apis/g/v1", status: 403 }),
      new ApiError({ method: "GET", path: "/apis/g/v1", status: 404, reason: "Forbidden" }),
      new ApiError({ method: "GET", path: "/apis/g/v1", status: 503 }),
      new TypeError("connection refused"),
    ]
  ) {
    await assert.rejects(discoverResource(failing(err), "prod", type), (thrown) => thrown === err);
  }
});

Deno.test("discoverResource asks the group's discovery document (core group under /api) with the caller's signal", async () => {
  const seen: [string, AbortSignal | undefined][] = [];
  const client: DiscoveryClient = {
    request: <T>(_m: string, path: string, o?: { signal?: AbortSignal }) => {
      seen.push([path, o?.signal]);
      return Promise.resolve({ resources: [{ name: "ks" }] } as T);
    },
  };
  const signal = new AbortController().signal;
  await discoverResource(client, "a", { group: "g", version: "v2", kind: "K", plural: "ks" }, signal);
  await discoverResource(client, "a", { group: "", version: "v1", kind: "K", plural: "ks" });
  assert.deepEqual(seen, [["/apis/g/v2", signal], ["/api/v1", undefined]]);
});

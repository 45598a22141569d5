// Tests for the RBAC pre-flight with a fake API server answer.

import assert from "node:assert/strict";
import { describePermission, missingPermissions } from "./access_review.ts";
import { type FetchLike, KubeClient } from "./client.ts";

Deno.test("describePermission() reads like kubectl's resource.group form", () => {
  assert.equal(
    describePermission({ verb: "patch", group: "demo.operator", resource: "uuid", subresource: "status" }),
    "patch uuid/status.demo.operator",
  );
  assert.equal(
    describePermission({ verb: "watch", group: "demo.operator", resource: "uuid" }),
    "watch uuid.demo.operator",
  );
  assert.equal(
    describePermission({ verb: "create", group: "", resource: "events", namespace: "a" }),
    "create events in namespace a",
  );
});

Deno.test("missingPermissions() posts one SelfSubjectAccessReview per check and returns the denied ones in order", async () => {
  const bodies: unknown[] = [];
  const urls: string[] = [];
  const fetch: FetchLike = (url, init) => {
    const body = JSON.parse(String(init.body));
    bodies.push(body);
    urls.push(`${init.method} ${new URL(String(url)).pathname}`);
    const allowed = body.spec.resourceAttributes.verb !== "patch";
    return Promise.resolve(new Response(JSON.stringify({ ...body, status: { allowed } }), { status: 201 }));
  };
  const client = new KubeClient({
    name: "fake",
    server: "https://fake.invalid",
    source: "test",
    auth: () => Promise.resolve({ headers: {}, insecureSkipTlsVerify: false }),
  }, { fetch });
  try {
    const checks = [
      { verb: "list", group: "demo.operator", resource: "uuid" },
      { verb: "patch", group: "demo.operator", resource: "uuid", subresource: "status" },
      { verb: "patch", group: "demo.operator", resource: "uuid" },
    ];
    assert.deepEqual(await missingPermissions(client, checks), [checks[1], checks[2]]);
    // Exactly one review request per check, each asking about its own check.
    assert.deepEqual(urls, checks.map(() => "POST /apis/authorization.k8s.io/v1/selfsubjectaccessreviews"));
    assert.deepEqual(
      bodies.map((b) => (b as { spec: { resourceAttributes: unknown } }).spec.resourceAttributes),
      checks,
    );
    assert.deepEqual(bodies[1], {
      apiVersion: "authorization.k8s.io/v1",
      kind: "SelfSubjectAccessReview",
      spec: { resourceAttributes: { verb: "patch", group: "demo.operator", resource: "uuid", subresource: "status" } },
    });
  } finally {
    client.close();
  }
});

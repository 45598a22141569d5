// Unit tests for AdmissionReview on the wire: paths, the checks of untrusted input, the answer.
import assert from "node:assert/strict";
import { parseReview, parseWebhookPath, ReviewInputError, reviewResponse, webhookPath } from "./admission_review.ts";

const enc = (v: unknown) => new TextEncoder().encode(JSON.stringify(v));
const review = (request: Record<string, unknown>) => ({
  apiVersion: "admission.k8s.io/v1",
  kind: "AdmissionReview",
  request: { uid: "abc", operation: "CREATE", ...request },
});

Deno.test("webhookPath() and parseWebhookPath() round-trip, and a malformed path names no webhook", () => {
  const route = { operator: "website", type: "mutating" as const, id: "defaults", cluster: "prod" };
  assert.equal(webhookPath(route), "/admission/website/mutating/defaults/prod");
  assert.deepEqual(parseWebhookPath(webhookPath(route)), route);
  for (
    const bad of [
      "/admission/website/other/x/prod",
      "/admission/Web/validating/x/prod",
      "/x",
      "/admission/a/validating/b/%zz",
      "/admission/a/validating/b/prod/extra",
    ]
  ) {
    assert.equal(parseWebhookPath(bad), undefined, bad);
  }
});

Deno.test("parseReview() returns the request tagged with the cluster", () => {
  const r = parseReview(
    enc(review({
      object: { metadata: { name: "w", namespace: "ns" }, spec: { image: "x" } },
      userInfo: { username: "jane", groups: ["devs"] },
      dryRun: true,
      subResource: "status",
    })),
    "staging",
  );
  assert.equal(r.cluster, "staging");
  assert.equal(r.name, "w");
  assert.equal(r.namespace, "ns");
  assert.equal(r.dryRun, true);
  assert.equal(r.subresource, "status");
  assert.deepEqual(r.userInfo, { username: "jane", groups: ["devs"] });
});

Deno.test("parseReview() refuses what is not a v1 AdmissionReview, naming the field and never the value", () => {
  const refused = (body: Uint8Array, re: RegExp) =>
    assert.throws(
      () => parseReview(body, "prod"),
      (e: unknown) =>
        e instanceof ReviewInputError && e.status === 400 && re.test(e.message) && !e.message.includes("s3cr3t"),
    );
  refused(new TextEncoder().encode("s3cr3t{"), /not JSON/);
  refused(enc({ apiVersion: "admission.k8s.io/v1beta1", kind: "AdmissionReview", request: {} }), /apiVersion, kind/);
  refused(enc(review({ uid: 7 })), /request.uid/);
  refused(enc(review({ uid: "x".repeat(129) })), /request.uid/);
  refused(enc(review({ operation: "s3cr3t" })), /request.operation/);
  refused(enc(review({ object: "s3cr3t" })), /request.object must be an object/);
  refused(enc(review({ object: { metadata: { name: 5 } } })), /request.object.metadata.name/);
  refused(enc(review({ userInfo: { groups: "s3cr3t" } })), /groups/);
  refused(enc({ ...review({}), request: ["s3cr3t"] }), /request must be an object/);
});

Deno.test("reviewResponse() answers a refusal's code and message, warnings, and a base64 JSON Patch", () => {
  const refused = reviewResponse("u", { allowed: false, code: 422, message: "bad", warnings: ["a\nb"] });
  assert.deepEqual(refused.response, {
    uid: "u",
    allowed: false,
    status: { code: 422, message: "bad" },
    warnings: ["a b"],
  });
  const patched = reviewResponse("u", { allowed: true, patch: [{ op: "add", path: "/spec/x", value: 1 }] });
  const response = patched.response as Record<string, string>;
  assert.equal(response.patchType, "JSONPatch");
  assert.deepEqual(JSON.parse(atob(response.patch)), [{ op: "add", path: "/spec/x", value: 1 }]);
  assert.equal(patched.apiVersion, "admission.k8s.io/v1");
});

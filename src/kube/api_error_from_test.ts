// Unit tests for building an ApiError from an apiserver's error response.
import assert from "node:assert/strict";
import { apiErrorFrom } from "./api_error_from.ts";

Deno.test("apiErrorFrom() takes reason and message from a Status body", () => {
  const err = apiErrorFrom(
    { method: "PATCH", path: "/apis/demo.operator/v1/namespaces/a/uuid/x/status" },
    409,
    {
      body: JSON.stringify({
        kind: "Status",
        apiVersion: "v1",
        status: "Failure",
        message: 'Operation cannot be fulfilled on uuid.demo.operator "x": the object has been modified',
        reason: "Conflict",
        details: { name: "x", group: "demo.operator", kind: "uuid" },
        code: 409,
      }),
    },
  );
  assert.equal(err.name, "ApiError");
  assert.equal(err.status, 409);
  assert.equal(err.reason, "Conflict");
  assert.equal(
    err.message,
    'PATCH /apis/demo.operator/v1/namespaces/a/uuid/x/status: 409 Conflict: Operation cannot be fulfilled on uuid.demo.operator "x": the object has been modified',
  );
});

Deno.test("apiErrorFrom() derives the reason from the status when the body is not a Status", () => {
  const e401 = apiErrorFrom({ method: "GET", path: "/api" }, 401, { body: "" });
  assert.equal(e401.reason, "Unauthorized");
  assert.equal(e401.message, "GET /api: 401 Unauthorized");
  const e503 = apiErrorFrom({ method: "GET", path: "/x" }, 503, { body: "<html>\nbusy</html>", retryAfter: "7" });
  assert.equal(e503.reason, "ServiceUnavailable");
  assert.equal(e503.retryAfterSeconds, 7);
  assert.equal(e503.message, "GET /x: 503 Service Unavailable: <html>");
  const e429 = apiErrorFrom({ method: "GET", path: "/x" }, 429, {
    body: { kind: "Status", reason: "TooManyRequests", message: "slow down", details: { retryAfterSeconds: 3 } },
  });
  assert.equal(e429.retryAfterSeconds, 3);
  const gone = apiErrorFrom({ method: "GET", path: "/w" }, 410, {
    body: { kind: "Status", code: 410, reason: "Expired", message: "too old resource version: 1 (2)" },
  });
  assert.equal(gone.reason, "Expired");
});

// --- KubeClient with an injected fetch ---------------------------------------------------------

Deno.test("apiErrorFrom prefers the Retry-After header over details.retryAfterSeconds", () => {
  const body = { kind: "Status", reason: "TooManyRequests", message: "slow down", details: { retryAfterSeconds: 9 } };
  const req = { method: "GET", path: "/x" };
  assert.equal(apiErrorFrom(req, 429, { body, retryAfter: " 2 " }).retryAfterSeconds, 2);
  assert.equal(apiErrorFrom(req, 429, { body }).retryAfterSeconds, 9);
  assert.equal(apiErrorFrom(req, 429, { body, retryAfter: "Wed, 21 Oct 2015 07:28:00 GMT" }).retryAfterSeconds, 9);
});

Deno.test("apiErrorFrom keeps only a short first line of a body that is not a Status", () => {
  const req = { method: "GET", path: "/x" };
  const html = `<html>${"x".repeat(300)}\nsecond line`;
  const err = apiErrorFrom(req, 502, { body: html });
  assert.equal(err.statusMessage.length, 203);
  assert.ok(err.statusMessage.endsWith("..."));
  assert.doesNotMatch(err.message, /second line/);
  assert.equal(apiErrorFrom(req, 503, { body: "" }).statusMessage, "");
});

// Unit tests for the kube error classes and the classification of failures by status.
import assert from "node:assert/strict";
import {
  ApiError,
  AuthError,
  ConfigError,
  failureStateOf,
  httpStatusOf,
  isConflict,
  isNotFound,
  retryAfterMsOf,
  TooLargeError,
  TransportError,
} from "./errors.ts";

Deno.test("Every kube error class sets its name, and chains its cause", () => {
  const cause = new Error("root");
  const errors = [
    new ConfigError("c", { cause }),
    new AuthError("prod", "a", { cause }),
    new ApiError({ method: "GET", path: "/x", status: 500 }, { cause }),
    new TransportError("t", { cause }),
  ];
  assert.deepEqual(errors.map((e) => e.name), ["ConfigError", "AuthError", "ApiError", "TransportError"]);
  for (const e of errors) assert.equal(e.cause, cause, e.name);
  assert.equal((errors[1] as AuthError).cluster, "prod");
});

Deno.test("ApiError reads like METHOD path: status phrase: message, and derives the reason from the status", () => {
  const err = new ApiError({
    method: "PATCH",
    path: "/apis/g/v1/namespaces/a/uuid/x/status",
    status: 409,
    statusMessage: "the object has been modified",
  });
  assert.equal(err.message, "PATCH /apis/g/v1/namespaces/a/uuid/x/status: 409 Conflict: the object has been modified");
  assert.equal(err.reason, "Conflict");
  assert.equal(new ApiError({ method: "GET", path: "/x", status: 410 }).reason, "Expired");
  assert.equal(new ApiError({ method: "GET", path: "/x", status: 599 }).reason, "InternalError");
  assert.equal(new ApiError({ method: "GET", path: "/x", status: 418 }).reason, "BadRequest");
  assert.equal(new ApiError({ method: "GET", path: "/x", status: 404, reason: "Gone" }).reason, "Gone");
  assert.equal(new ApiError({ method: "GET", path: "/x", status: 502 }).message, "GET /x: 502 Bad Gateway");
});

Deno.test("ApiError redacts a bearer token the server echoed in its message", () => {
  const err = new ApiError({
    method: "GET",
    path: "/x",
    status: 401,
    statusMessage: "invalid bearer token Authorization: Bearer abc.def.ghi-secret",
  });
  assert.doesNotMatch(err.message, /abc\.def\.ghi-secret/);
  assert.doesNotMatch(err.statusMessage, /abc\.def\.ghi-secret/);
});

Deno.test("TransportError records whether it was a timeout", () => {
  assert.equal(new TransportError("x").timeout, false);
  assert.equal(new TransportError("x", { timeout: true }).timeout, true);
});

Deno.test("httpStatusOf, isConflict and isNotFound read a numeric status from any error, and nothing else", () => {
  const s = (status: unknown) => Object.assign(new Error("x"), { status });
  assert.equal(httpStatusOf(s(409)), 409);
  assert.equal(httpStatusOf(s("409")), undefined);
  assert.equal(httpStatusOf(undefined), undefined);
  assert.equal(httpStatusOf("boom"), undefined);
  assert.equal(isConflict(s(409)), true);
  assert.equal(isConflict(s(404)), false);
  assert.equal(isNotFound(s(404)), true);
  assert.equal(isNotFound(new ApiError({ method: "GET", path: "/x", status: 410 })), false);
});

Deno.test("retryAfterMsOf converts a non-negative Retry-After to milliseconds and ignores anything else", () => {
  const r = (retryAfterSeconds: unknown) => ({ retryAfterSeconds });
  assert.equal(retryAfterMsOf(r(3)), 3000);
  assert.equal(retryAfterMsOf(r(0)), 0);
  assert.equal(retryAfterMsOf(r(-1)), undefined);
  assert.equal(retryAfterMsOf(r(Infinity)), undefined);
  assert.equal(retryAfterMsOf(r("3")), undefined);
  assert.equal(retryAfterMsOf(null), undefined);
});

Deno.test("failureStateOf maps 401 and AuthError to unauthorized, 403 to forbidden, 404 to missing-crd, the rest to unreachable", () => {
  const s = (status: number) => ({ status });
  assert.equal(failureStateOf(s(401)), "unauthorized");
  assert.equal(failureStateOf(new AuthError("c", "plugin failed")), "unauthorized");
  assert.equal(failureStateOf({ name: "AuthError" }), "unauthorized");
  assert.equal(failureStateOf(s(403)), "forbidden");
  assert.equal(failureStateOf(s(404)), "missing-crd");
  assert.equal(failureStateOf(s(500)), "unreachable");
  assert.equal(failureStateOf(new TransportError("connection refused")), "unreachable");
});

Deno.test("failureStateOf maps a TooLargeError (a body or watch event over --max-object-bytes) to too-large", () => {
  const err = new TooLargeError("GET /apis/g/v1/things: refused a watch event of more than 4 bytes", 4, undefined);
  assert.equal(err.name, "TooLargeError");
  assert.equal(failureStateOf(err), "too-large");
  assert.equal(failureStateOf({ name: "TooLargeError" }), "too-large");
});

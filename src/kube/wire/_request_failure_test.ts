// Tests for requestFailure: what a caller sees for each way a request can fail.

import assert from "node:assert/strict";
import { VirtualClock } from "../../util/mod.ts";
import { Call } from "./_call.ts";
import { NdjsonError } from "./_ndjson.ts";
import { innermostMessage, requestFailure } from "./_request_failure.ts";
import type { ClusterAccess } from "../config/cluster_access.ts";
import { ApiError, AuthError, TransportError } from "../errors.ts";

const ACCESS: ClusterAccess = {
  name: "prod",
  server: "https://prod.invalid:6443",
  source: "test",
  auth: () => Promise.reject(new Error("unused")),
};

const call = () => new Call(new VirtualClock(), undefined, new Set());

Deno.test("requestFailure() passes the client's own errors through unchanged, whatever aborted the call", () => {
  const closed = call();
  closed.close();
  for (
    const err of [
      new ApiError({ method: "GET", path: "/p", status: 404 }),
      new AuthError("prod", "no token"),
      new TransportError("y"),
    ]
  ) {
    assert.equal(requestFailure(err, call(), "GET", "/p", ACCESS), err);
    assert.equal(requestFailure(err, closed, "GET", "/p", ACCESS), err);
  }
});

Deno.test("requestFailure() gives the caller's own abort reason when the caller's signal aborted", () => {
  const ac = new AbortController();
  const reason = new Error("the caller gave up");
  const c = new Call(new VirtualClock(), ac.signal, new Set());
  ac.abort(reason);
  assert.equal(requestFailure(new DOMException("aborted", "AbortError"), c, "GET", "/p", ACCESS), reason);
});

Deno.test("requestFailure() says the client was closed, naming the cluster, with the original as cause", () => {
  const c = call();
  c.close();
  const original = new DOMException("request closed", "AbortError");
  const err = requestFailure(original, c, "PATCH", "/apis/x", ACCESS);
  assert.ok(err instanceof TransportError);
  assert.equal(err.message, 'PATCH /apis/x: the client for cluster "prod" was closed');
  assert.equal(err.cause, original);
  assert.equal(err.timeout, false);
});

Deno.test("requestFailure() reports a timeout or a deadline with the armed milliseconds and timeout set", async () => {
  for (const why of ["timeout", "deadline"] as const) {
    const clock = new VirtualClock();
    const c = new Call(clock, undefined, new Set());
    c.arm(5_000, why);
    await clock.advance(5_000);
    assert.equal(c.why, why);
    const err = requestFailure(new Error("socket read aborted"), c, "GET", "/slow", ACCESS);
    assert.ok(err instanceof TransportError);
    assert.equal(err.message, "GET /slow: no complete response from https://prod.invalid:6443 within 5000 ms");
    assert.equal(err.timeout, true);
  }
});

Deno.test("requestFailure() names a malformed watch stream and wraps anything else as 'cannot reach' with the innermost message", () => {
  const bad = requestFailure(new NdjsonError("not JSON"), call(), "GET", "/w", ACCESS);
  assert.ok(bad instanceof TransportError);
  assert.equal(bad.message, "GET /w: malformed watch stream from https://prod.invalid:6443");
  const refused = new Error("connect failed", { cause: new Deno.errors.ConnectionRefused("connection refused") });
  const err = requestFailure(refused, call(), "GET", "/x", ACCESS);
  assert.ok(err instanceof TransportError);
  assert.equal(err.message, "GET /x: cannot reach https://prod.invalid:6443: connection refused");
  assert.equal(err.cause, refused);
  assert.equal(err.timeout, false);
});

Deno.test("innermostMessage() takes the deepest non-empty message at most five causes down, or the value as text", () => {
  const deep = (n: number): Error => n === 0 ? new Error(`level 0`) : new Error(`level ${n}`, { cause: deep(n - 1) });
  assert.equal(innermostMessage(deep(2)), "level 0");
  assert.equal(innermostMessage(deep(7)), "level 3", "stops after five levels");
  assert.equal(innermostMessage(new Error("outer", { cause: new Error("") })), "outer");
  assert.equal(innermostMessage("plain text"), "plain text");
});

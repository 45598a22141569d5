// Unit tests of the protected port's Authorization parsing and of its review limits, on virtual time (the reviews
// themselves run against real apiservers in tests/production/protected_port_test.ts and port_hardening_test.ts).
import assert from "node:assert/strict";
import * as prom from "../../util/prometheus.ts";
import { silentLogger, VirtualClock } from "../../util/mod.ts";
import { bearerToken, RequestAuthorizer, type RequestAuthorizerOptions } from "./request_auth.ts";

Deno.test("bearerToken() takes the token of a Bearer header, in any case, and nothing else", () => {
  assert.equal(bearerToken("Bearer abc.def-ghi"), "abc.def-ghi");
  assert.equal(bearerToken("bearer  abc "), "abc");
  assert.equal(bearerToken("BEARER abc"), "abc");
  for (const other of [null, "", "Bearer", "Bearer ", "Basic YWRtaW46YWRtaW4=", "Bearer a b", "abc"]) {
    assert.equal(bearerToken(other), undefined, `Authorization: ${other}`);
  }
});

/**
 * The authorizer's limits as pure logic: reviews are answered by the test (`settle`), never by a server. Tokens
 * starting with "good" authenticate as that user and may get every path; the rest are rejected.
 */
function limited(options: Partial<RequestAuthorizerOptions> = {}) {
  const clock = new VirtualClock(1_000_000);
  const pending: { kind: string; token?: string; resolve: (v: unknown) => void }[] = [];
  const sent: string[] = [];
  const api = {
    request<T>(_method: string, path: string, init?: { body?: unknown }): Promise<T> {
      const spec = (init?.body as { spec: { token?: string } }).spec;
      const kind = path.includes("tokenreviews") ? "TokenReview" : "SubjectAccessReview";
      sent.push(kind);
      return new Promise<T>((resolve) => pending.push({ kind, token: spec.token, resolve: resolve as never }));
    },
  } as RequestAuthorizerOptions["api"];
  const authorizer = new RequestAuthorizer({
    api,
    registry: new prom.MetricRegistry(),
    logger: silentLogger(),
    clock,
    ...options,
  });
  /** Answers every review sent so far. */
  const settle = async () => {
    for (const p of pending.splice(0)) {
      const good = p.token?.startsWith("good") ?? true;
      p.resolve(
        p.kind === "TokenReview"
          ? { status: { authenticated: good, user: good ? { username: p.token } : undefined } }
          : { status: { allowed: true } },
      );
    }
    for (let i = 0; i < 10; i++) await Promise.resolve();
  };
  return { clock, authorizer, sent, pending, settle };
}

/** Polls (real time, 1 ms) until `cond` holds; a hang guard after 5 s. Token digests settle on a worker thread. */
async function until(cond: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`hang guard: ${what} not reached within 5 s`);
    await new Promise((r) => setTimeout(r, 1));
  }
}

/** Decisions with a count of those already answered. */
function tracked(decisions: Promise<string>[]) {
  const state = { done: 0, all: Promise.all(decisions) };
  for (const d of decisions) d.then(() => state.done++);
  return state;
}

Deno.test("RequestAuthorizer throttles a request needing a review beyond maxInFlight, and shares one review among requests with the same token", async () => {
  const t = limited({ maxInFlight: 4 });
  const first = t.authorizer.decide("Bearer junk-0", "/metrics");
  await until(() => t.pending.length === 1, "the first review in flight");
  const others = tracked(Array.from({ length: 9 }, (_, i) => t.authorizer.decide(`Bearer junk-${i + 1}`, "/metrics")));
  const same = [t.authorizer.decide("Bearer junk-0", "/metrics"), t.authorizer.decide("Bearer junk-0", "/status")];
  await until(() => t.pending.length === 4 && others.done === 6, "four reviews in flight, six requests throttled");
  await t.settle();
  const decisions = await others.all;
  assert.equal(decisions.filter((d) => d === "throttled").length, 6);
  assert.equal(decisions.filter((d) => d === "unauthenticated").length, 3);
  assert.equal(await first, "unauthenticated");
  assert.deepEqual(await Promise.all(same), ["unauthenticated", "unauthenticated"], "joined the review in flight");
  assert.equal(t.sent.length, 4);
});

Deno.test("RequestAuthorizer sends at most reviewBurst + t × reviewsPerSecond reviews over t seconds, however many tokens arrive", async () => {
  const t = limited({ maxInFlight: 1000, reviewsPerSecond: 10, reviewBurst: 20 });
  let throttled = 0;
  for (let second = 0; second < 5; second++) {
    const round = tracked(
      Array.from({ length: 200 }, (_, i) => t.authorizer.decide(`Bearer junk-${second}-${i}`, "/metrics")),
    );
    await until(() => round.done + t.pending.length === 200, "every request reviewed or throttled");
    await t.settle();
    throttled += (await round.all).filter((d) => d === "throttled").length;
    await t.clock.advance(1_000);
  }
  assert.ok(t.sent.length <= 20 + 4 * 10, `${t.sent.length} reviews sent`);
  assert.ok(t.sent.length >= 20, `${t.sent.length} reviews sent: the burst was not used`);
  assert.equal(throttled, 1000 - t.sent.length);
});

Deno.test("RequestAuthorizer keeps serving a reviewed token from its cache while junk tokens overflow the rejected-token cache", async () => {
  const t = limited({ maxEntries: 8, maxInFlight: 1000, reviewsPerSecond: 1000, reviewBurst: 1000 });
  const first = t.authorizer.decide("Bearer good-reader", "/metrics");
  await until(() => t.pending.length === 1, "the TokenReview");
  await t.settle();
  await until(() => t.pending.length === 1, "the SubjectAccessReview");
  await t.settle();
  assert.equal(await first, "allowed");
  const junk = Array.from({ length: 50 }, (_, i) => t.authorizer.decide(`Bearer junk-${i}`, "/metrics"));
  await until(() => t.pending.length === 50, "fifty junk reviews");
  await t.settle();
  assert.deepEqual(new Set(await Promise.all(junk)), new Set(["unauthenticated"]));
  const sentBefore = t.sent.length;
  assert.equal(await t.authorizer.decide("Bearer good-reader", "/metrics"), "allowed");
  assert.equal(t.sent.length, sentBefore, "the reader needed no new review");
});

// Tests for AuthCache: credentials reused within their TTL, fetched once for concurrent askers, dropped after a 401.

import assert from "node:assert/strict";
import { VirtualClock } from "../../util/mod.ts";
import { AuthCache } from "./_auth_cache.ts";
import { type ClusterAccess, type ClusterAuth, tlsFingerprint } from "./cluster_access.ts";

/** A ClusterAccess that counts auth() and invalidate() calls; `answer` resolves the pending auth() calls. */
class CountingAccess implements ClusterAccess {
  readonly name = "counting";
  readonly server = "https://counting.invalid:6443";
  readonly source = "test";
  authCalls = 0;
  invalidations = 0;
  token = "t1";
  #waiting: ((a: ClusterAuth) => void)[] = [];
  auth(): Promise<ClusterAuth> {
    this.authCalls++;
    return new Promise((resolve) => this.#waiting.push(resolve));
  }
  answer(): void {
    const auth = { headers: { Authorization: `Bearer ${this.token}` }, insecureSkipTlsVerify: false };
    for (const resolve of this.#waiting.splice(0)) resolve(auth);
  }
  invalidate(): void {
    this.invalidations++;
  }
}

Deno.test("AuthCache.get() asks access.auth() once for concurrent callers and gives them the same credentials", async () => {
  const access = new CountingAccess();
  const cache = new AuthCache(access, new VirtualClock(), 1_000);
  const a = cache.get();
  const b = cache.get();
  access.answer();
  const [ca, cb] = await Promise.all([a, b]);
  assert.equal(access.authCalls, 1);
  assert.equal(ca, cb);
  assert.equal(ca.auth.headers.Authorization, "Bearer t1");
  assert.equal(ca.fp, tlsFingerprint(ca.auth));
});

Deno.test("AuthCache.fresh() returns the cached credentials until ttlMs passed, then undefined", async () => {
  const access = new CountingAccess();
  const clock = new VirtualClock(100);
  const cache = new AuthCache(access, clock, 1_000);
  assert.equal(cache.fresh(), undefined, "nothing cached yet");
  const p = cache.get();
  access.answer();
  const creds = await p;
  assert.equal(creds.at, 100);
  await clock.advance(999);
  assert.equal(cache.fresh(), creds);
  await clock.advance(1);
  assert.equal(cache.fresh(), undefined, "expired at exactly ttlMs");
});

Deno.test("AuthCache.get() after the TTL asks access.auth() again and caches the new credentials", async () => {
  const access = new CountingAccess();
  const clock = new VirtualClock();
  const cache = new AuthCache(access, clock, 1_000);
  const first = cache.get();
  access.answer();
  await first;
  const again = await cache.get();
  assert.equal(access.authCalls, 1, "still fresh: no second call");
  assert.equal(again, await first);
  await clock.advance(1_000);
  access.token = "t2";
  const second = cache.get();
  access.answer();
  assert.equal((await second).auth.headers.Authorization, "Bearer t2");
  assert.equal(access.authCalls, 2);
  assert.equal(cache.fresh(), await second);
});

Deno.test("AuthCache.drop() forgets the credentials and invalidates the access; clear() only forgets them", async () => {
  const access = new CountingAccess();
  const cache = new AuthCache(access, new VirtualClock(), 1_000);
  const p = cache.get();
  access.answer();
  await p;
  cache.drop();
  assert.equal(cache.fresh(), undefined);
  assert.equal(access.invalidations, 1);
  const q = cache.get();
  access.answer();
  await q;
  cache.clear();
  assert.equal(cache.fresh(), undefined);
  assert.equal(access.invalidations, 1, "clear() leaves the access alone");
});

Deno.test("AuthCache.get() shares a failure with every waiting caller, then asks again on the next call", async () => {
  let calls = 0;
  const access: ClusterAccess = {
    name: "failing",
    server: "https://failing.invalid:6443",
    source: "test",
    auth: () => {
      calls++;
      return Promise.reject(new Error(`exec plugin failed (${calls})`));
    },
  };
  const cache = new AuthCache(access, new VirtualClock(), 1_000);
  const results = await Promise.allSettled([cache.get(), cache.get()]);
  assert.deepEqual(results.map((r) => r.status), ["rejected", "rejected"]);
  assert.equal(calls, 1);
  await assert.rejects(cache.get(), /exec plugin failed \(2\)/);
  assert.equal(cache.fresh(), undefined);
});

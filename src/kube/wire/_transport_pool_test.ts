// Tests for TransportPool: one transport per TLS digest, retired transports closed once drained, close() closes all.

import assert from "node:assert/strict";
import type { Transport } from "./_transport_interface.ts";
import { TransportPool } from "./_transport_pool.ts";
import type { ClusterAuth } from "../config/cluster_access.ts";

const AUTH: ClusterAuth = { headers: {}, insecureSkipTlsVerify: false };

/** A transport that only counts its closes (the pool never sends). */
interface CountedTransport extends Transport {
  closes: number;
}

function counting(): { pool: TransportPool; made: CountedTransport[] } {
  const made: CountedTransport[] = [];
  const pool = new TransportPool((_auth, fp) => {
    const t: CountedTransport = {
      fp,
      send: () => Promise.reject(new Error("not used")),
      close() {
        t.closes++;
      },
      closes: 0,
      inflight: 0,
      retired: false,
    };
    made.push(t);
    return t;
  });
  return { pool, made };
}

Deno.test("TransportPool.acquire() reuses one transport for one TLS digest and counts requests in flight", () => {
  const { pool, made } = counting();
  const a = pool.acquire(AUTH, "fp1");
  const b = pool.acquire(AUTH, "fp1");
  assert.equal(a, b);
  assert.equal(made.length, 1);
  assert.equal(a.inflight, 2);
  pool.release(a);
  pool.release(b);
  assert.equal(a.inflight, 0);
  assert.equal(made[0].closes, 0, "an idle current transport stays open");
});

Deno.test("TransportPool.acquire() with new TLS material closes an idle old transport at once", () => {
  const { pool, made } = counting();
  pool.release(pool.acquire(AUTH, "fp1"));
  const next = pool.acquire(AUTH, "fp2");
  assert.equal(made.length, 2);
  assert.equal(next, made[1]);
  assert.deepEqual([made[0].retired, made[0].closes], [true, 1]);
});

Deno.test("TransportPool keeps a replaced transport open until its last request is released, then closes it once", () => {
  const { pool, made } = counting();
  const old = pool.acquire(AUTH, "fp1");
  pool.acquire(AUTH, "fp1");
  pool.acquire(AUTH, "fp2");
  assert.deepEqual([made[0].retired, made[0].closes], [true, 0]);
  pool.release(old);
  assert.equal(made[0].closes, 0, "one request still in flight");
  pool.release(old);
  assert.equal(made[0].closes, 1);
  pool.close();
  assert.equal(made[0].closes, 1, "close() does not close a drained transport again");
  assert.equal(made[1].closes, 1);
});

Deno.test("TransportPool.suspect() retires the current transport after a timeout or deadline only", () => {
  const { pool, made } = counting();
  const t = pool.acquire(AUTH, "fp1");
  for (const why of [undefined, "caller", "closed"] as const) pool.suspect(why, t);
  assert.equal(pool.acquire(AUTH, "fp1"), t, "still current after non-timeout aborts");
  pool.release(t);
  pool.suspect("timeout", t);
  assert.equal(t.retired, true);
  const fresh = pool.acquire(AUTH, "fp1");
  assert.notEqual(fresh, t, "the next request gets a new transport");
  pool.release(t);
  assert.equal(made[0].closes, 1, "closed once its last request was released");
  pool.release(fresh);
  pool.suspect("deadline", fresh);
  assert.equal(made[1].closes, 1, "an idle suspect is closed at once");
});

Deno.test("TransportPool.suspect() leaves a transport alone that is no longer current", () => {
  const { pool, made } = counting();
  const old = pool.acquire(AUTH, "fp1");
  const current = pool.acquire(AUTH, "fp2");
  pool.suspect("timeout", old);
  assert.equal(pool.acquire(AUTH, "fp2"), current);
  assert.equal(made[1].retired, false);
});

Deno.test("TransportPool.reset() sends the next request over a new transport and closes the old one once drained", () => {
  const { pool, made } = counting();
  pool.reset(); // nothing yet: no effect
  const t = pool.acquire(AUTH, "fp1");
  pool.reset();
  pool.reset();
  assert.notEqual(pool.acquire(AUTH, "fp1"), t);
  assert.equal(made[0].closes, 0);
  pool.release(t);
  assert.equal(made[0].closes, 1);
});

Deno.test("TransportPool.close() closes the current and every retired transport, whatever is in flight", () => {
  const { pool, made } = counting();
  pool.acquire(AUTH, "fp1");
  pool.acquire(AUTH, "fp2");
  pool.acquire(AUTH, "fp3");
  pool.close();
  assert.deepEqual(made.map((t) => t.closes), [1, 1, 1]);
  const after = pool.acquire(AUTH, "fp3");
  assert.equal(after, made[3], "a request after close() gets a new transport");
});

Deno.test("TransportPool.acquire() keeps the current transport when making a new one throws", () => {
  let fail = false;
  const made: Transport[] = [];
  const pool = new TransportPool((_auth, fp) => {
    if (fail) throw new Error("bad certificate");
    const t: Transport = {
      fp,
      send: () => Promise.reject(new Error("unused")),
      close() {},
      inflight: 0,
      retired: false,
    };
    made.push(t);
    return t;
  });
  pool.release(pool.acquire(AUTH, "fp1"));
  fail = true;
  assert.throws(() => pool.acquire(AUTH, "fp2"), /bad certificate/);
  fail = false;
  assert.equal(pool.acquire(AUTH, "fp2"), made[1]);
  assert.equal(made.length, 2);
});

Deno.test("TransportPool.resetUnlessAlive() keeps a transport whose shared connection is alive, and resets one that is not", () => {
  let alive = true;
  let made = 0;
  const closed: number[] = [];
  const pool = new TransportPool((_auth, fp) => {
    const id = ++made;
    return {
      fp,
      send: () => Promise.reject(new Error("unused")),
      close: () => closed.push(id),
      aliveWithin: (ms: number) => alive && ms === 60_000,
      inflight: 0,
      retired: false,
    };
  });
  const first = pool.acquire(AUTH, "fp");
  pool.release(first);
  assert.equal(pool.resetUnlessAlive(60_000), false, "alive: kept");
  assert.equal(pool.acquire(AUTH, "fp"), first, "the same transport serves the next request");
  pool.release(first);
  alive = false;
  assert.equal(pool.resetUnlessAlive(60_000), true, "silent: reset");
  assert.deepEqual(closed, [1], "the idle silent transport is closed");
  assert.notEqual(pool.acquire(AUTH, "fp"), first, "the next request gets a new transport");
});

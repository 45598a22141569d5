// Tests of the peer Lease renewals: against the real local apiserver (context prod) in a namespace of the test's own,
// and on virtual time with an API client of our own that fails or hangs.

import assert from "node:assert/strict";
import { waitFor } from "../../../dev/support/cluster_api.ts";
import { inLocalNamespace } from "../../../dev/support/local_client.ts";
import { ApiError } from "../../kube/mod.ts";
import type { ApiClient } from "../../runtime/mod.ts";
import { Logger, VirtualClock } from "../../util/mod.ts";
import { LeaseClient } from "../leadership/leases.ts";
import { PeerLease } from "./_peer_lease.ts";
import { peerLeaseName } from "./lease_names.ts";
import { GROUP_LABEL, ROLE_LABEL, SHARD_TIMING_DEFAULTS, ShardTable, WEIGHT_ANNOTATION } from "./shard_table.ts";
import type { ShardCounters } from "./shard_status.ts";

const PERIOD = SHARD_TIMING_DEFAULTS.peerRenewPeriodMs;

function setup(leases: LeaseClient, weight = 1) {
  const clock = new VirtualClock(Date.now());
  const table = new ShardTable("replica-a", weight, SHARD_TIMING_DEFAULTS, clock);
  const counters: ShardCounters = { writes: 0, acquired: 0, released: 0, violations: 0 };
  const errors: (string | null)[] = [];
  let attempts = 0;
  const peer = new PeerLease({
    leases,
    namespace: leases.namespace,
    group: "g",
    identity: "replica-a",
    table,
    counters,
    onAttempt: () => attempts++,
    onError: (e) => errors.push(e),
    clock,
    logger: new Logger({ level: "error" }),
  });
  return { peer, table, counters, errors, clock, attempts: () => attempts };
}

function inNamespace(fn: (leases: LeaseClient) => Promise<void>): Promise<void> {
  return inLocalNamespace("prod", "peer-lease", (client, ns) => fn(new LeaseClient(client, ns)));
}

const NAME = peerLeaseName("g", "replica-a");

Deno.test("PeerLease creates its labelled Lease, counts this replica live, and renews it every period", () =>
  inNamespace(async (leases) => {
    const s = setup(leases, 3);
    const ac = new AbortController();
    const running = s.peer.start(ac.signal);
    try {
      await waitFor(() => s.attempts() >= 1, "the first renewal");
      const first = await leases.get(NAME);
      assert.equal(first?.spec?.holderIdentity, "replica-a");
      assert.equal(first?.spec?.leaseDurationSeconds, SHARD_TIMING_DEFAULTS.peerLeaseDurationMs / 1000);
      assert.equal(first?.metadata.labels?.[ROLE_LABEL], "peer");
      assert.equal(first?.metadata.labels?.[GROUP_LABEL], "g");
      assert.equal(first?.metadata.annotations?.[WEIGHT_ANNOTATION], "3");
      assert.equal(s.table.selfLive(), true);
      assert.deepEqual(s.errors, [null]);
      await s.clock.advance(PERIOD);
      await waitFor(() => s.attempts() >= 2, "the second renewal");
      const second = await leases.get(NAME);
      assert.notEqual(second?.metadata.resourceVersion, first?.metadata.resourceVersion);
      assert.notEqual(second?.spec?.renewTime, first?.spec?.renewTime);
      assert.equal(second?.spec?.acquireTime, first?.spec?.acquireTime, "acquireTime is kept across renewals");
      assert.equal(s.counters.writes, 2);
    } finally {
      ac.abort();
      await running;
    }
  }));

Deno.test("PeerLease re-creates its Lease when someone deleted it, and delete() removes it and lapses the table", () =>
  inNamespace(async (leases) => {
    const s = setup(leases);
    const ac = new AbortController();
    const running = s.peer.start(ac.signal);
    try {
      await waitFor(() => s.attempts() >= 1, "the first renewal");
      await leases.delete(NAME);
      await s.clock.advance(PERIOD);
      await waitFor(() => s.attempts() >= 2, "the renewal after the deletion");
      assert.equal((await leases.get(NAME))?.spec?.holderIdentity, "replica-a");
      assert.deepEqual(s.errors, [null, null]);
    } finally {
      ac.abort();
      await running;
    }
    await s.peer.delete();
    assert.equal(await leases.get(NAME), undefined);
    assert.equal(s.table.selfLive(), false);
  }));

Deno.test("PeerLease reports a failed renewal, stays not live, and retries after half a period", async () => {
  const forbidden = new ApiError({ method: "POST", path: "/leases", status: 403 });
  let calls = 0;
  const api: ApiClient = {
    request: () => {
      calls++;
      return Promise.reject(forbidden);
    },
  };
  const s = setup(new LeaseClient(api, "ns"));
  const ac = new AbortController();
  const running = s.peer.start(ac.signal);
  await s.clock.advance(0);
  assert.equal(s.attempts(), 1);
  assert.match(s.errors[0] ?? "", /^renewing peer Lease: .*403/);
  assert.equal(s.table.selfLive(), false);
  await s.clock.advance(PERIOD / 2 - 1);
  assert.equal(s.attempts(), 1, "no retry before half a period");
  await s.clock.advance(1);
  assert.equal(s.attempts(), 2);
  assert.equal(calls, 2);
  ac.abort();
  await running;
  assert.equal(s.counters.writes, 0);
});

Deno.test("PeerLease gives a hanging renewal two periods, then reports it timed out", async () => {
  const api: ApiClient = {
    request: (_m, _p, o) =>
      new Promise((_, reject) => o?.signal?.addEventListener("abort", () => reject(o.signal!.reason))),
  };
  const s = setup(new LeaseClient(api, "ns"));
  const ac = new AbortController();
  const running = s.peer.start(ac.signal);
  await s.clock.advance(PERIOD * 2 - 1);
  assert.equal(s.attempts(), 0, "still waiting on the first renewal");
  await s.clock.advance(1);
  assert.equal(s.attempts(), 1);
  assert.match(s.errors[0] ?? "", /timed out/);
  ac.abort();
  await running;
});

Deno.test("PeerLease.delete never throws, also when nothing was written or the delete fails", async () => {
  const api: ApiClient = { request: () => Promise.reject(new Error("connection refused")) };
  const s = setup(new LeaseClient(api, "ns"));
  s.table.renewed(s.clock.now());
  await s.peer.delete();
  assert.equal(s.table.selfLive(), false, "a graceful stop lapses the table even with no Lease written");
});

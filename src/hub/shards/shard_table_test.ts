// Unit tests of the shard's ownership and fence rules on virtual time.

import assert from "node:assert/strict";
import { VirtualClock } from "../../util/mod.ts";
import type { LeaseObject } from "../leadership/leases.ts";
import {
  CLUSTER_ANNOTATION,
  olderVersion,
  ROLE_LABEL,
  SHARD_TIMING_DEFAULTS,
  ShardTable,
  WEIGHT_ANNOTATION,
} from "./shard_table.ts";
import { boundedRendezvous } from "./bounded_rendezvous.ts";

let rv = 100;
function peer(identity: string, weight = 1, version = String(++rv)): LeaseObject {
  return {
    metadata: {
      name: `g-peer-${identity}`,
      namespace: "ns",
      resourceVersion: version,
      labels: { [ROLE_LABEL]: "peer" },
      annotations: { [WEIGHT_ANNOTATION]: String(weight) },
    },
    spec: { holderIdentity: identity, leaseDurationSeconds: 15 },
  };
}
function fence(cluster: string, holder: string, version = String(++rv)): LeaseObject {
  return {
    metadata: {
      name: `g-fence-${cluster}`,
      namespace: "ns",
      resourceVersion: version,
      labels: { [ROLE_LABEL]: "fence" },
      annotations: { [CLUSTER_ANNOTATION]: cluster },
    },
    spec: { holderIdentity: holder, leaseDurationSeconds: 15 },
  };
}

function table(clock: VirtualClock, identity = "me"): ShardTable {
  const t = new ShardTable(identity, 1, SHARD_TIMING_DEFAULTS, clock);
  t.renewed(clock.now());
  t.synced();
  return t;
}

Deno.test("ShardTable counts a peer dead only after its Lease stayed unchanged for its duration on this clock", async () => {
  const clock = new VirtualClock(1_000_000);
  const t = table(clock);
  t.observe(peer("b"));
  await clock.advance(14_999);
  assert.equal(t.peerLive("b"), true);
  assert.equal(t.peerGone("b"), false);
  t.observe(peer("b")); // renewed: a new resourceVersion restarts the count
  await clock.advance(14_999);
  assert.equal(t.peerLive("b"), true);
  await clock.advance(1);
  assert.equal(t.peerLive("b"), false);
  assert.equal(t.peerGone("b"), true);
  assert.deepEqual(t.livePeers().map((p) => p.identity), []);
});

Deno.test("ShardTable ignores a watch event older than what it already saw", () => {
  const clock = new VirtualClock(0);
  const t = table(clock);
  t.observe(fence("c1", "me", "500"));
  t.observe(fence("c1", "", "499"));
  assert.equal(t.fence("c1")?.holder, "me");
  assert.equal(olderVersion("99", "100"), true);
  assert.equal(olderVersion("abc", "100"), false);
});

Deno.test("ShardTable lets a fence be taken when absent, free, or held by a dead peer, and not otherwise", async () => {
  const clock = new VirtualClock(0);
  const t = table(clock);
  assert.deepEqual(t.takeable("c1"), { ok: true, reason: "absent", holder: "" });
  t.observe(fence("c1", ""));
  assert.equal(t.takeable("c1").reason, "free");
  t.observe(peer("b"));
  t.observe(fence("c1", "b"));
  assert.deepEqual(t.takeable("c1"), { ok: false, reason: "held", holder: "b" });
  // b keeps renewing its peer Lease: its fence (written once) stays held.
  for (let i = 0; i < 20; i++) {
    await clock.advance(2_000);
    t.observe(peer("b"));
  }
  assert.equal(t.takeable("c1").ok, false);
  assert.equal(t.owner("c1"), "b");
  // b stops renewing: 15 s later its fences may be taken.
  await clock.advance(14_999);
  assert.equal(t.takeable("c1").ok, false);
  await clock.advance(1);
  assert.deepEqual(t.takeable("c1"), { ok: true, reason: "holder-gone", holder: "b" });
  assert.equal(t.owner("c1"), null);
});

Deno.test("ShardTable never lets a fence be taken from a live holder, however old the fence", async () => {
  const clock = new VirtualClock(0);
  const t = table(clock);
  t.observe(peer("b"));
  t.observe(fence("c1", "b"));
  for (let i = 0; i < 300; i++) {
    await clock.advance(2_000);
    t.observe(peer("b"));
    t.renewed(clock.now());
  }
  assert.deepEqual(t.takeable("c1"), { ok: false, reason: "held", holder: "b" });
  assert.equal(t.owner("c1"), "b");
});

Deno.test("ShardTable counts a deleted peer gone only a peer duration after the deletion was seen", async () => {
  const clock = new VirtualClock(0);
  const t = table(clock);
  const b = peer("b");
  t.observe(b);
  t.observe(fence("c1", "b"));
  t.forget(b);
  assert.equal(t.peerLive("b"), false);
  assert.equal(t.takeable("c1").ok, false);
  await clock.advance(15_000);
  assert.equal(t.takeable("c1").reason, "holder-gone");
  // A holder this replica never saw a peer Lease of counts from when the watch first synced.
  const fresh = table(clock, "other");
  fresh.observe(fence("c2", "ghost"));
  assert.equal(fresh.takeable("c2").ok, false);
  await clock.advance(15_000);
  assert.equal(fresh.takeable("c2").reason, "holder-gone");
});

Deno.test("ShardTable stops this replica reconciling before any other replica may take its fence", async () => {
  const clock = new VirtualClock(0);
  const me = table(clock, "me");
  const other = table(clock, "other");
  const f = fence("c1", "me");
  me.hold("c1", f, clock.now());
  other.observe(f);
  const myPeer = peer("me");
  other.observe(myPeer);
  assert.equal(me.mayReconcile("c1"), true);
  assert.equal(me.owner("c1"), "me");
  assert.equal(other.owner("c1"), "me");
  // "me" renewed its peer Lease at t=0 and then could not renew again: it stops at the renew deadline (10 s)...
  let stoppedAt: number | undefined;
  let takeableAt: number | undefined;
  for (let t = 0; t <= 20_000; t += 250) {
    if (stoppedAt === undefined && !me.mayReconcile("c1")) stoppedAt = clock.now();
    other.renewed(clock.now());
    if (takeableAt === undefined && other.takeable("c1").ok) takeableAt = clock.now();
    await clock.advance(250);
  }
  assert.equal(stoppedAt, 10_000);
  // ...while the other replica, which saw the renewal at t=0, may take the fence only at 15 s.
  assert.equal(takeableAt, 15_000);
  assert.ok(stoppedAt! < takeableAt!);
});

Deno.test("ShardTable lists as orphans the fences naming this replica that it does not hold", () => {
  const clock = new VirtualClock(0);
  const t = table(clock);
  t.hold("c1", fence("c1", "me"), 0);
  t.observe(fence("c2", "me"));
  t.observe(fence("c3", "b"));
  assert.deepEqual(t.orphans(), ["c2"]);
  t.drop("c1");
  assert.deepEqual(t.orphans().sort(), ["c1", "c2"]);
  assert.equal(t.takeable("c1").reason, "mine");
});

Deno.test("ShardTable gives every replica the same owner from the same live peers, honouring weights", () => {
  const clock = new VirtualClock(0);
  const a = table(clock, "a");
  const b = new ShardTable("b", 3, SHARD_TIMING_DEFAULTS, clock);
  b.renewed(0);
  b.synced();
  a.observe(peer("b", 3));
  b.observe(peer("a", 1));
  const names = Array.from({ length: 2000 }, (_, i) => `c${i}`);
  for (const n of names) a.register(n);
  for (const n of [...names].reverse()) b.register(n);
  let bCount = 0;
  for (const n of names) {
    assert.equal(a.desiredOwner(n), b.desiredOwner(n));
    if (a.desiredOwner(n) === "b") bCount++;
  }
  // b weighs 3 against a's 1: three quarters, capped at ⌈2000 · 3/4⌉ + 1.
  assert.ok(bCount > 1420 && bCount <= 1501, `b owns ${bCount} of 2000`);
});

Deno.test("ShardTable does not count itself live once it lapsed, nor before its first renewal", () => {
  const clock = new VirtualClock(0);
  const t = new ShardTable("me", 1, SHARD_TIMING_DEFAULTS, clock);
  assert.equal(t.selfLive(), false);
  assert.deepEqual(t.livePeers(), []);
  t.renewed(0);
  assert.equal(t.selfLive(), true);
  t.hold("c1", fence("c1", "me"), 0);
  t.lapse();
  assert.equal(t.mayReconcile("c1"), false);
  assert.equal(t.takeable("c1").reason, "not-synced");
});

Deno.test("ShardTable.desiredOwner() picks what boundedRendezvous() picks over its registered clusters, with weights", () => {
  const clock = new VirtualClock(0);
  const t = table(clock, "a");
  const peers = [{ identity: "a", weight: 1 }, { identity: "b", weight: 2 }, { identity: "c", weight: 0.5 }];
  const names = Array.from({ length: 300 }, (_, i) => `cluster-${i}`);
  for (const c of names) t.register(c);
  const want = boundedRendezvous(names, peers);
  for (const c of names) {
    assert.equal(t.desiredOwner(c, peers), want.get(c));
    assert.equal(t.desiredOwner(c, peers), want.get(c), "from the cache");
  }
  // Unregistering a cluster changes the caps: the owners are computed again over the clusters left.
  t.unregister("cluster-0");
  const left = boundedRendezvous(names.slice(1), peers);
  assert.equal(t.desiredOwner("cluster-0", peers), undefined);
  for (const c of names.slice(1)) assert.equal(t.desiredOwner(c, peers), left.get(c));
});

Deno.test("ShardTable.owners() spreads 30 registered clusters over 3 live replicas within 10 ± 3", () => {
  const clock = new VirtualClock(0);
  const t = table(clock, "me");
  t.observe(peer("hub_3a41c2"));
  t.observe(peer("hub_51d0be"));
  for (let i = 1; i <= 30; i++) t.register(`shard-${String(i).padStart(2, "0")}`);
  const counts = new Map<string, number>();
  for (const o of t.owners().values()) counts.set(o, (counts.get(o) ?? 0) + 1);
  assert.equal([...counts.values()].reduce((a, b) => a + b, 0), 30);
  for (const [p, n] of counts) assert.ok(n >= 7 && n <= 13, `${p} owns ${n} of 30`);
});

Deno.test("ShardTable.nextPeerExpiry() names when the earliest live peer Lease expires", async () => {
  const clock = new VirtualClock(0);
  const t = table(clock);
  assert.equal(t.nextPeerExpiry(), undefined);
  t.observe(peer("b"));
  await clock.advance(5_000);
  t.observe(peer("c"));
  assert.equal(t.nextPeerExpiry(), 15_000);
  await clock.advance(10_000);
  assert.equal(t.nextPeerExpiry(), 20_000);
});

Deno.test("ShardTable.stalePeers() lists other replicas' peer Leases unchanged for the given number of durations", async () => {
  const clock = new VirtualClock(0);
  const t = table(clock);
  t.observe(peer("b"));
  t.observe(peer("me"));
  await clock.advance(59_999);
  assert.deepEqual(t.stalePeers(4), []);
  await clock.advance(1);
  assert.deepEqual(t.stalePeers(4).map((p) => p.holder), ["b"]);
});

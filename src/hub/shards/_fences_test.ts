// Tests of the fence Lease writes against the real local apiserver (context prod), in a namespace of the test's own.

import assert from "node:assert/strict";
import { inLocalNamespace } from "../../../dev/support/local_client.ts";
import { Logger, VirtualClock } from "../../util/mod.ts";
import { LeaseClient, type LeaseObject, microTime } from "../leadership/leases.ts";
import { Fences } from "./_fences.ts";
import { fenceLeaseName, peerLeaseName } from "./lease_names.ts";
import { CLUSTER_ANNOTATION, GROUP_LABEL, ROLE_LABEL, SHARD_TIMING_DEFAULTS, ShardTable } from "./shard_table.ts";
import type { ShardCounters } from "./shard_status.ts";

const GROUP = "g";

interface Replica {
  fences: Fences;
  table: ShardTable;
  counters: ShardCounters;
  clock: VirtualClock;
}

/** A replica `identity` whose table is synced and live, writing fences through `leases`. */
function replica(identity: string, leases: LeaseClient): Replica {
  const clock = new VirtualClock(Date.now());
  const table = new ShardTable(identity, 1, SHARD_TIMING_DEFAULTS, clock);
  table.renewed(clock.now());
  table.synced();
  const counters: ShardCounters = { writes: 0, acquired: 0, released: 0, violations: 0 };
  const fences = new Fences({
    leases,
    group: GROUP,
    identity,
    table,
    counters,
    clock,
    logger: new Logger({ level: "error" }),
  });
  return { fences, table, counters, clock };
}

function inNamespace(fn: (leases: LeaseClient) => Promise<void>): Promise<void> {
  return inLocalNamespace("prod", "fences", (client, ns) => fn(new LeaseClient(client, ns)));
}

/** Writes `cluster`'s fence naming `holder`, as another replica would. */
function fenceHeldBy(leases: LeaseClient, cluster: string, holder: string): Promise<LeaseObject> {
  const now = microTime(Date.now());
  return leases.create(fenceLeaseName(GROUP, cluster), {
    holderIdentity: holder,
    leaseDurationSeconds: 15,
    acquireTime: now,
    renewTime: now,
    leaseTransitions: 0,
  }, {
    labels: { [ROLE_LABEL]: "fence", [GROUP_LABEL]: GROUP },
    annotations: { [CLUSTER_ANNOTATION]: cluster },
  });
}

/** Writes `identity`'s peer Lease, as that replica would. */
function peerOf(leases: LeaseClient, identity: string): Promise<LeaseObject> {
  const now = microTime(Date.now());
  return leases.create(peerLeaseName(GROUP, identity), {
    holderIdentity: identity,
    leaseDurationSeconds: 15,
    renewTime: now,
  }, {
    labels: { [ROLE_LABEL]: "peer", [GROUP_LABEL]: GROUP },
  });
}

Deno.test("Fences.acquire creates an absent fence naming this replica, labelled, and records it as held", () =>
  inNamespace(async (leases) => {
    const a = replica("replica-a", leases);
    assert.equal(await a.fences.acquire("prod-1", () => true), true);
    const lease = await leases.get(fenceLeaseName(GROUP, "prod-1"));
    assert.equal(lease?.spec?.holderIdentity, "replica-a");
    assert.equal(lease?.spec?.leaseTransitions, 0);
    assert.equal(lease?.metadata.labels?.[ROLE_LABEL], "fence");
    assert.equal(lease?.metadata.labels?.[GROUP_LABEL], GROUP);
    assert.equal(lease?.metadata.annotations?.[CLUSTER_ANNOTATION], "prod-1");
    assert.equal(a.table.held("prod-1")?.lease.metadata.resourceVersion, lease?.metadata.resourceVersion);
    assert.equal(a.table.mayReconcile("prod-1"), true);
    assert.deepEqual(a.counters, { writes: 1, acquired: 1, released: 0, violations: 0 });
  }));

Deno.test("Fences.acquire takes nothing from a live holder, nor when the cluster is no longer wanted", () =>
  inNamespace(async (leases) => {
    const held = await fenceHeldBy(leases, "prod-1", "replica-b");
    const a = replica("replica-a", leases);
    a.table.observe(await peerOf(leases, "replica-b"));
    assert.equal(await a.fences.acquire("prod-1", () => true), false);
    assert.equal(await a.fences.acquire("prod-2", () => false), false);
    assert.equal((await leases.get(held.metadata.name))?.metadata.resourceVersion, held.metadata.resourceVersion);
    assert.equal(await leases.get(fenceLeaseName(GROUP, "prod-2")), undefined);
    assert.equal(a.table.held("prod-1"), undefined);
    assert.deepEqual(a.counters, { writes: 0, acquired: 0, released: 0, violations: 0 });
  }));

Deno.test("Fences.acquire loses a race with a 409 and takes nothing: the fence keeps the other writer's holder", () =>
  inNamespace(async (leases) => {
    await fenceHeldBy(leases, "prod-1", "");
    // Between this replica's fresh read and its write, replica-b writes the fence.
    const racing = Object.create(leases) as LeaseClient;
    racing.get = async (name, signal) => {
      const read = await leases.get(name, signal);
      if (read) await leases.update(read, { ...read.spec, holderIdentity: "replica-b" });
      return read;
    };
    const a = replica("replica-a", racing);
    assert.equal(await a.fences.acquire("prod-1", () => true), false);
    assert.equal((await leases.get(fenceLeaseName(GROUP, "prod-1")))?.spec?.holderIdentity, "replica-b");
    assert.equal(a.table.held("prod-1"), undefined);
    assert.equal(a.counters.acquired, 0);
  }));

Deno.test("Fences.acquire takes a dead holder's fence only when a fresh read shows its peer Lease unchanged", () =>
  inNamespace(async (leases) => {
    const fence = await fenceHeldBy(leases, "prod-1", "replica-b");
    const peer = await peerOf(leases, "replica-b");
    const a = replica("replica-a", leases);
    a.table.observe(fence);
    a.table.observe(peer);
    await a.clock.advance(SHARD_TIMING_DEFAULTS.peerLeaseDurationMs);
    a.table.renewed(a.clock.now());
    assert.equal(a.table.takeable("prod-1").reason, "holder-gone");
    // replica-b renewed after all, but this replica's watch has not seen it yet.
    await leases.update(peer, { ...peer.spec, renewTime: microTime(Date.now()) });
    assert.equal(await a.fences.acquire("prod-1", () => true), false, "a renewed peer is alive");
    assert.equal((await leases.get(fenceLeaseName(GROUP, "prod-1")))?.spec?.holderIdentity, "replica-b");
    assert.equal(a.table.peerLive("replica-b"), true, "the fresh read was recorded");
    // Now it really stops renewing.
    await a.clock.advance(SHARD_TIMING_DEFAULTS.peerLeaseDurationMs);
    a.table.renewed(a.clock.now());
    assert.equal(await a.fences.acquire("prod-1", () => true), true);
    const taken = await leases.get(fenceLeaseName(GROUP, "prod-1"));
    assert.equal(taken?.spec?.holderIdentity, "replica-a");
    assert.equal(taken?.spec?.leaseTransitions, 1);
  }));

Deno.test("Fences.free empties the holder of a fence this replica holds, even after another write of it", () =>
  inNamespace(async (leases) => {
    const a = replica("replica-a", leases);
    assert.equal(await a.fences.acquire("prod-1", () => true), true);
    const written = a.table.held("prod-1")!.lease;
    // Someone touched the fence (still naming replica-a): the stale update gets a 409, the fresh read still names us.
    await leases.update(written, { ...written.spec, renewTime: microTime(Date.now() + 1) });
    await a.fences.free("prod-1", written, "test");
    assert.equal((await leases.get(fenceLeaseName(GROUP, "prod-1")))?.spec?.holderIdentity, "");
    assert.equal(a.counters.released, 1);
    await a.fences.free("gone", { ...written, metadata: { ...written.metadata, name: "not-there" } }, "test");
    assert.equal(a.counters.released, 1, "a fence already deleted is not counted");
  }));

Deno.test("Fences.free leaves a fence that another replica took in the meantime", () =>
  inNamespace(async (leases) => {
    const a = replica("replica-a", leases);
    assert.equal(await a.fences.acquire("prod-1", () => true), true);
    const written = a.table.held("prod-1")!.lease;
    await leases.update(written, { ...written.spec, holderIdentity: "replica-b" });
    await a.fences.free("prod-1", written, "test");
    assert.equal((await leases.get(fenceLeaseName(GROUP, "prod-1")))?.spec?.holderIdentity, "replica-b");
    assert.equal(a.counters.released, 0);
  }));

Deno.test("Fences.freeOrphan frees a fence naming this replica that it does not hold, and only that", () =>
  inNamespace(async (leases) => {
    await fenceHeldBy(leases, "orphan", "replica-a");
    await fenceHeldBy(leases, "theirs", "replica-b");
    const a = replica("replica-a", leases);
    assert.equal(await a.fences.acquire("mine", () => true), true);
    await a.fences.freeOrphan("orphan");
    await a.fences.freeOrphan("theirs");
    await a.fences.freeOrphan("mine");
    await a.fences.freeOrphan("never-was");
    const holder = async (c: string) => (await leases.get(fenceLeaseName(GROUP, c)))?.spec?.holderIdentity;
    assert.equal(await holder("orphan"), "");
    assert.equal(await holder("theirs"), "replica-b");
    assert.equal(await holder("mine"), "replica-a");
    assert.equal(a.counters.released, 1);
  }));

// Tests of the shard group's Lease watch against the real local apiserver (context prod), in a namespace of its own.

import assert from "node:assert/strict";
import { waitFor } from "../../../dev/support/cluster_api.ts";
import { inLocalNamespace } from "../../../dev/support/local_client.ts";
import type { KubeClient } from "../../kube/mod.ts";
import { Logger, VirtualClock } from "../../util/mod.ts";
import { LeaseClient, type LeaseObject } from "../leadership/leases.ts";
import { LeaseWatch } from "./_lease_watch.ts";
import { fenceLeaseName, peerLeaseName } from "./lease_names.ts";
import {
  CLUSTER_ANNOTATION,
  GROUP_LABEL,
  ROLE_LABEL,
  SHARD_TIMING_DEFAULTS,
  ShardTable,
  WEIGHT_ANNOTATION,
} from "./shard_table.ts";

function peer(leases: LeaseClient, group: string, identity: string, weight: number): Promise<LeaseObject> {
  return leases.create(peerLeaseName(group, identity), { holderIdentity: identity, leaseDurationSeconds: 15 }, {
    labels: { [ROLE_LABEL]: "peer", [GROUP_LABEL]: group },
    annotations: { [WEIGHT_ANNOTATION]: String(weight) },
  });
}

function fence(leases: LeaseClient, group: string, cluster: string, holder: string): Promise<LeaseObject> {
  return leases.create(fenceLeaseName(group, cluster), { holderIdentity: holder, leaseDurationSeconds: 15 }, {
    labels: { [ROLE_LABEL]: "fence", [GROUP_LABEL]: group },
    annotations: { [CLUSTER_ANNOTATION]: cluster },
  });
}

/** Runs a LeaseWatch of group "g" in a fresh namespace until `fn` settles. */
function watching(
  fn: (w: { watch: LeaseWatch; table: ShardTable; leases: LeaseClient; fences: string[] }) => Promise<void>,
  before?: (leases: LeaseClient) => Promise<void>,
): Promise<void> {
  return inLocalNamespace("prod", "lease-watch", async (client: KubeClient, ns) => {
    const leases = new LeaseClient(client, ns);
    await before?.(leases);
    const clock = new VirtualClock(Date.now());
    const table = new ShardTable("me", 2, SHARD_TIMING_DEFAULTS, clock);
    const fences: string[] = [];
    const watch = new LeaseWatch({
      cluster: "prod",
      client,
      leases,
      namespace: ns,
      group: "g",
      table,
      onFence: (c) => fences.push(c),
      onChange: () => {},
      clock,
      logger: new Logger({ level: "error" }),
    });
    const ac = new AbortController();
    const running = watch.start(ac.signal);
    try {
      await fn({ watch, table, leases, fences });
    } finally {
      ac.abort();
      await running;
    }
  });
}

Deno.test("LeaseWatch records its group's peer and fence Leases in the table once listed, and ignores other groups", () =>
  watching(async ({ watch, table, fences }) => {
    await waitFor(() => table.isSynced, "the first list");
    assert.equal(table.peerLive("b"), true);
    assert.equal(table.peer("b")?.weight, 3);
    assert.equal(table.fence("prod")?.holder, "b");
    assert.deepEqual(fences, ["prod"]);
    assert.equal(table.peer("other-group"), undefined, "a Lease of another group is not watched");
    assert.equal(table.fence("elsewhere"), undefined);
    assert.deepEqual(watch.peersSeen({ identity: "me", weight: 2 }), [
      { identity: "b", weight: 3 },
      { identity: "me", weight: 2 },
    ]);
  }, async (leases) => {
    await peer(leases, "g", "b", 3);
    await fence(leases, "g", "prod", "b");
    await peer(leases, "h", "other-group", 1);
    await fence(leases, "h", "elsewhere", "other-group");
  }));

Deno.test("LeaseWatch marks the table synced after a first list that finds no Lease of its group", () =>
  watching(async ({ table, fences }) => {
    await waitFor(() => table.isSynced, "the table synced by an empty list");
    assert.equal(table.peer("other-group"), undefined);
    assert.deepEqual(fences, []);
  }, async (leases) => {
    await peer(leases, "h", "other-group", 1);
  }));

Deno.test("LeaseWatch reports a fence's change and forgets a deleted peer Lease by its last version", () =>
  watching(async ({ watch, table, leases, fences }) => {
    await waitFor(() => table.isSynced, "the first list");
    const f = await fence(leases, "g", "staging", "b");
    const p = await peer(leases, "g", "b", 1);
    await waitFor(() => table.fence("staging") && table.peer("b"), "the fence and peer Lease seen");
    await leases.update(f, { ...f.spec, holderIdentity: "c" });
    await waitFor(() => table.fence("staging")?.holder === "c", "the new holder seen");
    assert.deepEqual(fences, ["staging", "staging"]);
    await leases.delete(p.metadata.name);
    await waitFor(() => table.peer("b") === undefined, "the deletion seen");
    assert.equal(table.peerLive("b"), false);
    assert.deepEqual(watch.peersSeen({ identity: "me", weight: 1 }), [{ identity: "me", weight: 1 }]);
  }, async (leases) => {
    await peer(leases, "g", "me", 2);
  }));

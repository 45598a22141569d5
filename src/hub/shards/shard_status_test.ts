// Tests of what the `shard` section of /status promises, read from a coordinator that has not started (no I/O).

import assert from "node:assert/strict";
import { Logger } from "../../util/mod.ts";
import { ShardCoordinator, type ShardTarget } from "./shard_coordinator.ts";
import type { ShardStatus } from "./shard_status.ts";
import { unreachableAccess } from "../../../dev/support/shard_target.ts";

const target: ShardTarget = {
  engage: () => Promise.resolve(),
  disengage: () => Promise.resolve(),
  hold: () => {},
  pause: () => {},
  resume: () => {},
};

function coordinator(): ShardCoordinator {
  const c = new ShardCoordinator({
    home: unreachableAccess("home"),
    namespace: "hub-system",
    group: "g",
    identity: "host_ab12",
    weight: 2,
    warm: true,
    logger: new Logger({ level: "error" }),
  });
  c.connect(target);
  return c;
}

Deno.test("ShardStatus with no cluster registered has a share of 0, not NaN, and lists this replica as its only peer", () => {
  const s: ShardStatus = coordinator().status();
  assert.equal(s.registered, 0);
  assert.equal(s.share, 0);
  assert.equal(s.identity, "host_ab12");
  assert.equal(s.weight, 2);
  assert.equal(s.warm, true);
  assert.equal(s.leases, "hub-system/g");
  assert.equal(s.live, false, "not live before its first renewal");
  assert.deepEqual(s.peers, [{ identity: "host_ab12", weight: 2, live: false, self: true }]);
  assert.deepEqual(s.pending, { fenceOps: 0, teardowns: 0 });
  assert.equal(s.lastError, null);
});

Deno.test("ShardStatus lists every registered cluster, sorted, with no owner while nobody holds its fence", async () => {
  const c = coordinator();
  for (const name of ["zeta", "alpha", "mid"]) {
    await c.engage(name, unreachableAccess(name), { provider: "flag", registeredAt: "" });
  }
  const s = c.status();
  assert.deepEqual(Object.keys(s.clusters), ["alpha", "mid", "zeta"]);
  assert.deepEqual(Object.values(s.clusters), [null, null, null]);
  assert.equal(s.registered, 3);
  assert.equal(s.unowned, 3);
  assert.equal(s.owned, 0);
  assert.equal(s.share, 0);
});

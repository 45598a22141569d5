// Unit tests of the hub_shard_* series: each reads the coordinator's status at scrape time.

import assert from "node:assert/strict";
import * as prom from "../../util/prometheus.ts";
import { registerShardMetrics } from "./_shard_metrics.ts";
import type { ShardStatus } from "./shard_status.ts";

function status(over: Partial<ShardStatus> = {}): ShardStatus {
  return {
    identity: "a",
    weight: 1,
    warm: false,
    leases: "ns/g",
    live: true,
    peers: [
      { identity: "a", weight: 1, live: true, self: true },
      { identity: "b", weight: 1, live: true, self: false },
      { identity: "c", weight: 1, live: false, self: false },
    ],
    owned: 3,
    unowned: 1,
    registered: 7,
    share: 3 / 7,
    handoffs: { acquired: 5, released: 2 },
    fenceViolations: 0,
    leaseWrites: 42,
    pending: { fenceOps: 0, teardowns: 0 },
    lastError: null,
    clusters: {},
    ...over,
  };
}

Deno.test("registerShardMetrics exposes owned, unowned, live peers, handoffs, violations and writes as read at scrape", async () => {
  const registry = new prom.MetricRegistry();
  let current = status();
  registerShardMetrics(registry, () => current);
  const text = await registry.metrics();
  assert.match(text, /^hub_shard_clusters_owned 3$/m);
  assert.match(text, /^hub_shard_clusters_unowned 1$/m);
  assert.match(text, /^hub_shard_peers 2$/m, "only live peers count");
  assert.match(text, /^hub_shard_handoffs_total\{direction="acquired"\} 5$/m);
  assert.match(text, /^hub_shard_handoffs_total\{direction="released"\} 2$/m);
  assert.match(text, /^hub_shard_fence_violations_total 0$/m);
  assert.match(text, /^hub_shard_lease_writes_total 42$/m);
  current = status({ owned: 4, handoffs: { acquired: 6, released: 2 }, leaseWrites: 43, fenceViolations: 1 });
  const later = await registry.metrics();
  assert.match(later, /^hub_shard_clusters_owned 4$/m);
  assert.match(later, /^hub_shard_handoffs_total\{direction="acquired"\} 6$/m, "counters show the status, not a sum");
  assert.match(later, /^hub_shard_lease_writes_total 43$/m);
  assert.match(later, /^hub_shard_fence_violations_total 1$/m);
});

// The `hub_shard_*` Prometheus series, read from the coordinator's status at each scrape.

import * as prom from "../../util/prometheus.ts";
import type { ShardStatus } from "./shard_status.ts";

/** Adds the `hub_shard_*` series to `registry`; each scrape calls `status` once per series. */
export function registerShardMetrics(registry: prom.MetricRegistry, status: () => ShardStatus): void {
  const registers = [registry];
  new prom.Gauge({
    name: "hub_shard_clusters_owned",
    help: "Registered clusters this replica owns (holds the fence of, and reconciles in)",
    registers,
    collect() {
      this.set(status().owned);
    },
  });
  new prom.Gauge({
    name: "hub_shard_clusters_unowned",
    help: "Registered clusters no live replica owns, as seen from this replica",
    registers,
    collect() {
      this.set(status().unowned);
    },
  });
  new prom.Gauge({
    name: "hub_shard_peers",
    help: "Live replicas of this shard group, this one included",
    registers,
    collect() {
      this.set(status().peers.filter((p) => p.live).length);
    },
  });
  new prom.Counter({
    name: "hub_shard_handoffs_total",
    help: "Fences this replica acquired or released, by direction",
    labelNames: ["direction"],
    registers,
    collect() {
      const s = status();
      this.reset();
      this.inc({ direction: "acquired" }, s.handoffs.acquired);
      this.inc({ direction: "released" }, s.handoffs.released);
    },
  });
  new prom.Counter({
    name: "hub_shard_fence_violations_total",
    help: "Fences found taken by another replica while this one still counted itself their holder (should be 0)",
    registers,
    collect() {
      this.reset();
      this.inc(status().fenceViolations);
    },
  });
  new prom.Counter({
    name: "hub_shard_lease_writes_total",
    help: "Peer and fence Lease writes this replica sent successfully",
    registers,
    collect() {
      this.reset();
      this.inc(status().leaseWrites);
    },
  });
}

// Public surface of src/hub: the Hub, engaged clusters' health, leader election, metrics and the health server.
export * from "./hub.ts";
export * from "./cluster/engaged_cluster.ts";
export * from "./health/cluster_health.ts";
export * from "./health/metrics.ts";
export * from "./http/mod.ts";
export * from "./leadership/leader_election.ts";
export * from "./leadership/leases.ts";
export * from "./health/reconcile_history.ts";
export {
  cleanupLine,
  type CleanupOptions,
  type CleanupResult,
  type CleanupTarget,
  cleanupTargets,
  FinalizerCleanupError,
  removeFinalizers,
} from "./cluster/finalizer_cleanup.ts";
export { cleaningOnRemove, type CleanupOnRemoveOptions } from "./cluster/cleanup_on_remove.ts";

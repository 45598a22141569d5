// Public surface of src/hub: the Hub, engaged clusters' health, leader election, metrics and the health server.
export * from "./hub.ts";
export * from "./engaged_cluster.ts";
export * from "./cluster_health.ts";
export * from "./metrics.ts";
export * from "./http/mod.ts";
export * from "./leader_election.ts";
export * from "./leases.ts";
export * from "./reconcile_history.ts";
export {
  cleanupLine,
  type CleanupOptions,
  type CleanupResult,
  type CleanupTarget,
  cleanupTargets,
  FinalizerCleanupError,
  removeFinalizers,
} from "./finalizer_cleanup.ts";
export { cleaningOnRemove, type CleanupOnRemoveOptions } from "./cleanup_on_remove.ts";

// What an EngagedCluster is built with: its operators and namespaces, the hub's queue, gate and budget, its limits.

import type { FetchLike, PermissionCheck } from "../../kube/mod.ts";
import type { QueuePriority, Request, TokenBucket } from "../../queue/mod.ts";
import type { ClusterConnection, EventLevel, Operator, StoredObject } from "../../runtime/mod.ts";
import type { Clock, LogBurst, Logger, Semaphore } from "../../util/mod.ts";

/** What one engaged cluster offers the others (an EngagedCluster fits): reaching across, and its cached objects. */
export interface PeerCluster {
  /** This cluster as `operator`'s reconciles see it from another cluster, bound to `signal` (undefined: not hosted). */
  connection(operator: string, signal: AbortSignal): ClusterConnection | undefined;
  /** `operator`'s cached objects of its own resource in this cluster ([] for an operator it does not host). */
  cachedObjects(operator: string): StoredObject[];
  /** How many objects `cachedObjects(operator)` would list, without the copy. */
  cachedCount?(operator: string): number;
  /** Re-evaluates `operator`'s watches run only where needed (WatchedResource.neededIn): its objects changed. */
  refreshWatches?(operator: string): void;
}

/** How an EngagedCluster is built (the Hub builds every one). */
export interface EngagedClusterOptions {
  operators: readonly Operator[];
  /**
   * Namespaces to watch; empty means all. A cluster whose access has a `namespaceScope` (namespaced access, opted in
   * per kubeconfig context) watches and checks its rights in that one namespace instead.
   */
  namespaces: readonly string[];
  /** Permissions checked in every operator's pre-flight besides its own (e.g. the leader-election Lease's). */
  extraPermissions?: readonly PermissionCheck[];
  /**
   * Called with objects of one operator that changed and need a reconcile (each request names its cluster: this one's,
   * or another's an operator's `watches` or `onEngage` mapped to): at `live` priority for watch events, at `low` for
   * what a list, a relist or a resync found (see FairWorkQueue).
   */
  onChange(operator: string, requests: readonly Request[], priority: QueuePriority): void;
  /** Another engaged cluster, for reconcilers that reach across clusters. */
  lookup(cluster: string): PeerCluster | undefined;
  /** The names of every engaged cluster, for a reconcile's `clusters()`. */
  clusterNames?(): string[];
  /**
   * Shared by every cluster of the hub: each pre-flight attempt (discovery and RBAC checks, the first requests, with
   * the TLS handshake) holds a permit, so thousands of clusters engaged at once reach their API servers in waves.
   */
  preflightGate?: Semaphore;
  /** This cluster's API budget, spent by every request a reconciler makes. */
  apiBudget: TokenBucket;
  eventLevel?: EventLevel;
  idleTimeoutMs?: number;
  requestTimeoutMs?: number;
  /** The largest response body or watch event held from this cluster (see KubeClientOptions.maxObjectBytes). */
  maxObjectBytes?: number;
  pageSize?: number;
  /** Offer HTTP/2 to the API server instead of HTTP/1.1 keep-alive (see KubeClientOptions.http2). */
  http2?: boolean;
  /** Reading a field an operator's `reads` does not declare throws (see HubOptions.checkReads). */
  checkReads?: boolean;
  /** The transport, for in-process tests (see KubeClientOptions.fetch). */
  fetch?: FetchLike;
  clock?: Clock;
  logger: Logger;
  /**
   * Where the first failure of the first contact (`cluster not reachable`) is written instead of this cluster's own
   * logger: one summarised stream shared by many clusters (the Hub passes one for clusters it does not trust), so
   * 10,000 unreachable clusters write a few lines, not 10,000. Default: this cluster's logger.
   */
  contactLog?: LogBurst;
  onResponse?(info: { method: string; code: number | "error"; durationMs: number }): void;
}

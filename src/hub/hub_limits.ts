// The Hub's tunables, their defaults, and how the unset ones scale with the clusters engaged.

import { DEFAULT_MAX_OBJECT_BYTES } from "../kube/mod.ts";

/**
 * Tunables; every one has a default a newcomer never needs to change.
 *
 * @example
 * ```ts
 * import { DEFAULT_LIMITS, Hub, type HubLimits, Logger } from "../../hub.ts";
 *
 * const limits: Partial<HubLimits> = { concurrency: 8, reconcileTimeoutMs: 10_000, maxObjectBytes: 1024 * 1024 };
 * const hub = new Hub({ limits, logger: new Logger({ level: "info" }) });
 * console.log(hub.limits.concurrency, hub.limits.clusterQps === DEFAULT_LIMITS.clusterQps); // 8 true
 * ```
 */
export interface HubLimits {
  /**
   * Reconciles running at once, across all clusters. Default 16, and 4 per engaged cluster beyond four clusters, at
   * most 256 (on a 3-cluster backlog 24 and 48 drained no faster than 16 and held 4 and 18 MB more); a value given is
   * kept whatever the clusters.
   */
  concurrency: number;
  /** Process-wide reconciles per second. Default: 500 per engaged cluster; a value given is kept as is. */
  qps: number;
  /** Process-wide reconcile burst. Default: 1000 per engaged cluster; a value given is kept as is. */
  burst: number;
  /** Each cluster's API requests per second from reconcilers. Default 200. */
  clusterQps: number;
  /** Each cluster's API request burst from reconcilers. Default 400. */
  clusterBurst: number;
  /** A reconcile running longer is abandoned and retried. Default 30 s. */
  reconcileTimeoutMs: number;
  /** A watch silent for this long is reopened. Default 90 s. */
  watchIdleTimeoutMs: number;
  /** Timeout of one non-watch API request. Default 30 s. */
  requestTimeoutMs: number;
  /** On shutdown, in-flight reconciles get this long. Default 10 s. */
  drainTimeoutMs: number;
  /** Per-item retry backoff cap. Default 5 minutes. */
  maxRetryDelayMs: number;
  /** Clusters running their pre-flight (discovery, RBAC checks) at once; the rest wait their turn. Default 128. */
  preflightConcurrency: number;
  /**
   * The largest response body or watch event held from a cluster, bytes; larger is refused and the watch turns
   * `too-large`. Default 4 MiB (see DEFAULT_MAX_OBJECT_BYTES in src/kube/client.ts for why).
   */
  maxObjectBytes: number;
}

/**
 * The limits a Hub uses for every one not given in `HubOptions.limits`. A hub not given `concurrency`, `qps` or
 * `burst` scales them with the clusters it serves: `qps` and `burst` here are per engaged cluster; `concurrency` is
 * the floor, raised by `CONCURRENCY_PER_CLUSTER` per engaged cluster up to `MAX_SCALED_CONCURRENCY`. Each API server is protected by its own `clusterQps`/`clusterBurst`, which need no
 * scaling; the process-wide reconcile limits only bound the hub's own work, so they grow with the clusters.
 *
 * @example
 * ```ts
 * import { DEFAULT_LIMITS } from "./hub_limits.ts";
 * console.log(DEFAULT_LIMITS.concurrency); // 16
 * ```
 */
export const DEFAULT_LIMITS: HubLimits = {
  concurrency: 16,
  qps: 500,
  burst: 1000,
  clusterQps: 200,
  clusterBurst: 400,
  reconcileTimeoutMs: 30_000,
  watchIdleTimeoutMs: 90_000,
  requestTimeoutMs: 30_000,
  drainTimeoutMs: 10_000,
  maxRetryDelayMs: 300_000,
  preflightConcurrency: 128,
  maxObjectBytes: DEFAULT_MAX_OBJECT_BYTES,
};

/** Reconciles at once per engaged cluster when `concurrency` scales with the clusters (not given), above 16. */
export const CONCURRENCY_PER_CLUSTER = 4;

/** The most reconciles a hub runs at once when `concurrency` scales with the clusters (not given). */
export const MAX_SCALED_CONCURRENCY = 256;

/** The limits that scale with the engaged clusters when the options do not give them. */
export type ScaledLimit = "concurrency" | "qps" | "burst";

/**
 * A scaled limit's value for `clusters` engaged clusters (at least one counts): `qps` and `burst` are
 * DEFAULT_LIMITS' per-cluster values times the clusters; `concurrency` is DEFAULT_LIMITS' floor, raised by
 * CONCURRENCY_PER_CLUSTER per cluster, at most MAX_SCALED_CONCURRENCY.
 *
 * @example
 * ```ts
 * import { scaledLimit } from "./hub_limits.ts";
 * console.log(scaledLimit("concurrency", 10)); // 40
 * ```
 */
export function scaledLimit(limit: ScaledLimit, clusters: number): number {
  const n = Math.max(1, clusters);
  if (limit === "concurrency") {
    return Math.min(MAX_SCALED_CONCURRENCY, Math.max(DEFAULT_LIMITS.concurrency, CONCURRENCY_PER_CLUSTER * n));
  }
  return DEFAULT_LIMITS[limit] * n;
}

// The health entries of /status: one per engaged cluster, and inside it one per operator.

import type { HealthState } from "../../runtime/mod.ts";

/**
 * One operator's health in one cluster: the `operators` entries of `/status`.
 *
 * @example
 * ```ts
 * import type { Hub, OperatorHealth } from "../../../hub.ts";
 *
 * declare const hub: Hub;
 * const mirror: OperatorHealth | undefined = hub.health().clusters["prod"]?.operators["mirror"];
 * if (mirror?.missingPermissions.length) {
 *   console.log(`the mirror operator lacks in prod: ${mirror.missingPermissions.join(", ")}`);
 * }
 * ```
 */
export interface OperatorHealth {
  /** The pre-flight's state until it passed, then the worst of the operator's watches. */
  state: HealthState;
  /** True once the operator's first full list completed (readiness). */
  synced: boolean;
  /** Objects in the operator's cache (shared with operators of the same resource). */
  objects: number;
  /**
   * Objects its other watched resources cache here (e.g. the Mirror's sources and copies); absent when it has none.
   * Not part of `objects`, which counts the operators' own resources.
   */
  watchedObjects?: number;
  /** The operator's keys queued in this cluster. */
  queue: number;
  /** The last failure, one line, or null. */
  lastError: string | null;
  /** RBAC permissions the pre-flight found missing, kubectl-style. */
  missingPermissions: string[];
}

/**
 * A cluster's health: its state is the worst of its operators'.
 *
 * @example
 * ```ts
 * import type { ClusterHealth, Hub } from "../../../hub.ts";
 *
 * declare const hub: Hub;
 * const prod: ClusterHealth | undefined = hub.health().clusters["prod"];
 * if (prod && prod.state !== "watching") {
 *   console.log(`prod is ${prod.state}: ${prod.lastError}; ${prod.queue} keys queued, ${prod.relists} relists`);
 * }
 * ```
 */
export interface ClusterHealth {
  /** The worst of its operators' states (`watching` with no operator). */
  state: HealthState;
  /** True when every operator is synced. */
  synced: boolean;
  /** Objects cached for this cluster, each shared cache counted once. */
  objects: number;
  /** Keys queued for this cluster, all operators together. */
  queue: number;
  /** Seconds since a watch last delivered an event or bookmark, or null before the first. */
  lastEventAgeSeconds: number | null;
  /** The first operator's last failure, one line, or null. */
  lastError: string | null;
  /** First-contact attempts that failed, pre-flight attempts, and list and watch requests started. */
  connectAttempts: number;
  /** Full relists after a 410 or a gap. */
  relists: number;
  /** Streams aborted by the inactivity watchdog. */
  watchdogAborts: number;
  /** Every operator's missing RBAC permissions. */
  missingPermissions: string[];
  /** True when a watch loop stopped making progress (fails liveness). */
  wedged: boolean;
  /** Each operator's own entry, by name. */
  operators: Record<string, OperatorHealth>;
  /** The one namespace watched here, for a cluster registered with namespaced access (its context's opt-in). */
  namespace?: string;
  /** Which provider registered the cluster (`flag`, `folder`, `secret`), when the hub was told. */
  provider?: string;
  /** When it was registered, ISO-8601. */
  registeredAt?: string;
  /** Its inventory's health condition (a ClusterProfile's ControlPlaneHealthy), for providers that have one. */
  condition?: { type: string; status: string; reason?: string; message?: string };
  /** With --shard: the replica that owns it (holds its fence), or null. */
  owner?: string | null;
  /**
   * Whether it holds readiness back until synced (set by the Hub): the clusters the command line names or defines, the
   * home cluster and the Lease's; every cluster with `--readiness-clusters all`. Absent counts as true.
   */
  gatesReadiness?: boolean;
}

/**
 * A cluster provider's own health: the `providers` entries of `/status` (`folder`, `secret`). It names what could not
 * be used (a file, a Secret) and why, never the content or a credential.
 *
 * @example
 * ```ts
 * import type { Hub, ProviderHealth } from "../../../hub.ts";
 *
 * declare const hub: Hub;
 * const folder: ProviderHealth = {
 *   state: "watching",
 *   synced: true,
 *   watches: ["/app/clusters"],
 *   clusters: 2,
 *   lastError: null,
 *   errors: [{ source: "/app/clusters/west.yaml", cluster: "west", error: "no current-context" }],
 * };
 * hub.showProviders(() => ({ folder }));
 * console.log(hub.health().providers?.folder.errors.length); // 1
 * ```
 */
export interface ProviderHealth {
  /** `watching` while its sources are read and watched; else its watch's state (e.g. `forbidden` on the Secrets). */
  state: HealthState;
  /**
   * Whether its first read of its sources completed (the folder's first scan, the Secrets' first list): until then the
   * hub does not know every cluster it should serve, so it is not ready, and `notReady` names `<provider> provider`.
   * The read is of the hub's own home cluster (or folder), never of a cluster it registers.
   */
  synced: boolean;
  /** What it watches: folders and files, or `<cluster>:<namespace>` of the Secrets. */
  watches: string[];
  /** Clusters it offers that are served now. */
  clusters: number;
  /** Its watch's last failure (listing the folder, listing the Secrets), one line, or null. */
  lastError: string | null;
  /**
   * Each source it could not use, with why: a file or Secret that does not parse or lacks its kubeconfig, a broken
   * context, a name registered twice. `cluster` is set when the problem is one name's.
   */
  errors: { source: string; cluster?: string; error: string }[];
  /** In /status, how many `errors` were left out past the first hundred (absent when none were). */
  errorsOmitted?: number;
}

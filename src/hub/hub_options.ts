// How a Hub is built (HubOptions), and what it tells of the clusters it engages (ClusterObserver).

import type { ClusterAccess, FetchLike, PermissionCheck } from "../kube/mod.ts";
import type { Operator } from "../runtime/mod.ts";
import type { Clock, Logger } from "../util/mod.ts";
import type { HubLeaderElection } from "./leadership/_home_lease.ts";
import type { HubLimits } from "./hub_limits.ts";

/**
 * How to build a Hub; only `logger` is required.
 *
 * @example
 * ```ts
 * import { Hub, type HubOptions, Logger, uuidOperator } from "../../hub.ts";
 *
 * const options: HubOptions = {
 *   operators: [uuidOperator()],
 *   namespaces: ["shop", "billing"],
 *   limits: { concurrency: 8 },
 *   eventLevel: "Normal",
 *   logger: new Logger({ level: "info", format: "json" }),
 * };
 * const hub = new Hub(options);
 * console.log(hub.operators()); // ["uuid"]
 * ```
 */
export interface HubOptions {
  /** The operators to host; more can be added with `register` before `start`. */
  operators?: readonly Operator[];
  /** Namespaces to watch in every cluster; empty means all. */
  namespaces?: string[];
  /** Overrides of DEFAULT_LIMITS. */
  limits?: Partial<HubLimits>;
  /** Kubernetes Events are posted at or above this level. Default "Warning". */
  eventLevel?: "Normal" | "Warning";
  /** When set, only the replica holding the Lease reconciles; the others keep watching (warm caches). */
  leaderElection?: HubLeaderElection;
  /** Offer HTTP/2 to the API servers instead of HTTP/1.1 keep-alive (`--http2`). Default false. */
  http2?: boolean;
  /**
   * Development: an operator that declared `reads` gets an UndeclaredFieldError when it reads any other field of an
   * object its client returns (`--check-reads`; on in every hub of the test kit). Default false: each read of a
   * guarded object goes through a Proxy.
   */
  checkReads?: boolean;
  /** Which clusters hold readiness back besides the hub itself (see HubReadiness). Default: the command line's. */
  readiness?: HubReadiness;
  /**
   * Checked in every operator's pre-flight in every cluster besides its own (e.g. the webhook installer's RBAC).
   * @ignore
   */
  clusterPermissions?: readonly PermissionCheck[];
  /**
   * The transport of every cluster client, for in-process tests (see KubeClientOptions.fetch).
   * @ignore
   */
  fetch?: FetchLike;
  /**
   * Time source, for tests on virtual time.
   * @ignore
   */
  clock?: Clock;
  /** Where the hub logs, one structured line per event. */
  logger: Logger;
}

/**
 * What `/readyz` waits for. The hub itself always counts: its home cluster, the Lease's cluster with leader election,
 * and every cluster provider's first read of its sources (until then the hub does not know what it serves).
 *
 * @example
 * ```ts
 * import { Hub, type HubReadiness, Logger } from "../../hub.ts";
 *
 * const readiness: HubReadiness = { clusters: "command-line", home: "prod", named: ["staging"] };
 * const hub = new Hub({ readiness, logger: new Logger({ level: "info" }) });
 * console.log(hub.health().ready);
 * ```
 */
export interface HubReadiness {
  /**
   * `command-line` (the default): besides those, only the clusters the command line names hold readiness back: those
   * in `named`, and those the command line defines: engaged without a registration (an embedder's own `engage`), or
   * whose registration is the command line's (ClusterRegistration.commandLine, else provider `flag`). Any other
   * cluster a provider registered (a Secret, a file dropped into the folder, a ClusterProfile, a Cluster API Cluster)
   * is shown in /status and metrics and never makes the pod unready. `all`: every registered cluster holds it back
   * (`--readiness-clusters all`).
   */
  clusters?: "command-line" | "all";
  /** The home cluster's name: it holds readiness back whoever registered it (the hub's own objects live there). */
  home?: string;
  /** Names `--clusters a,b` selects one by one: each holds readiness back whoever registers it, even before one does. */
  named?: readonly string[];
}

/** Told of clusters engaged and disengaged in a Hub (e.g. the webhook installer). */
export interface ClusterObserver {
  /** `name` was engaged (launched) with `access`. */
  engaged(name: string, access: ClusterAccess): void;
  /** `name` was disengaged (its work is stopping). */
  disengaged(name: string): void;
}

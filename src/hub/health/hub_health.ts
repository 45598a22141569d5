// The Hub's health document (/healthz, /readyz, /status) and the entries of clusters registered but not engaged.

import type { ClusterHealth, OperatorHealth, ProviderHealth } from "./cluster_health.ts";
import type { LeaderElectionSnapshot } from "../leadership/leader_election.ts";

/**
 * The hub's overall status: `failing` fails liveness, `degraded` names a cluster or operator in trouble.
 *
 * @example
 * ```ts
 * import type { Hub, HubStatus } from "../../../hub.ts";
 *
 * declare const hub: Hub;
 * const status: HubStatus = hub.health().status;
 * const liveness = status === "failing" ? 503 : 200; // degraded stays live: one cluster's trouble is its own
 * ```
 */
export type HubStatus = "ok" | "degraded" | "failing";

/**
 * The aggregated health document served by /healthz, /readyz and /status.
 *
 * @example
 * ```ts
 * import type { Hub, HubHealth } from "../../../hub.ts";
 *
 * declare const hub: Hub;
 * const health: HubHealth = hub.health();
 * if (!health.ready) console.log(`not ready: waiting for ${health.notReady?.join(", ")}`);
 * for (const [name, cluster] of Object.entries(health.clusters)) console.log(name, cluster.state, cluster.objects);
 * console.log(health.controller.inFlight, health.leaderElection?.leader);
 * ```
 */
export interface HubHealth {
  /** `failing` when the controller or a watch loop is wedged, `degraded` when a cluster is not `watching`. */
  status: HubStatus;
  /**
   * True once every cluster that gates readiness (`gatesReadiness`: the command line's, the home cluster's; see
   * HubReadiness) completed its first full list for every operator, and every cluster provider its first read of its
   * sources. A cluster a provider registered never holds it back unless `--readiness-clusters all`.
   */
  ready: boolean;
  /** Each engaged cluster's health, by name. */
  clusters: Record<string, ClusterHealth>;
  /**
   * The clusters holding readiness back (by name), then the providers (`secret provider`) whose first read is pending,
   * when any.
   */
  notReady?: string[];
  /** The shared controller: reconciles running, keys queued, and whether it stopped making progress. */
  controller: { inFlight: number; queued: number; wedged: boolean };
  /** Present with --leader-elect. `leader: false` is a healthy standby: it watches but does not reconcile. */
  leaderElection?: LeaderElectionSnapshot & { cluster: string };
  /** The cluster providers at work (`folder`, `secret`), when a registry drives this hub (see `showProviders`). */
  providers?: Record<string, ProviderHealth>;
  /** Present with --shard: this replica, its peers, its share, and every registered cluster's owner. */
  shard?: HubShardStatus;
  /** Present with --webhook-bind-address: the admission port and, per cluster, its webhook configurations' state. */
  admission?: Record<string, unknown>;
}

/**
 * The `shard` section of /status, as the shard coordinator reports it (src/hub/shards).
 *
 * @example
 * ```ts
 * import type { HubShardStatus } from "../../../hub.ts";
 *
 * const shard: HubShardStatus = { identity: "hub-0", clusters: { prod: "hub-0", staging: "hub-1", dev: null } };
 * const mine = Object.keys(shard.clusters).filter((c) => shard.clusters[c] === shard.identity);
 * console.log(mine); // ["prod"]
 * ```
 */
export interface HubShardStatus {
  /** This replica's identity. */
  identity: string;
  /** Every registered cluster's owner (a replica identity), or null while none holds it. */
  clusters: Record<string, string | null>;
}

/**
 * Where the hub reads ownership from, with --shard.
 *
 * @example
 * ```ts
 * import type { Hub, HubShardView } from "../../../hub.ts";
 *
 * declare const hub: Hub;
 * const owners: Record<string, string | null> = { prod: "hub-0", staging: "hub-1" };
 * const view: HubShardView = {
 *   owner: (cluster) => owners[cluster] ?? null,
 *   status: () => ({ identity: "hub-0", clusters: { ...owners } }),
 * };
 * hub.useShardView(view);
 * console.log(hub.health().shard?.clusters); // { prod: "hub-0", staging: "hub-1" }
 * ```
 */
export interface HubShardView {
  /** The owner of one cluster as seen from this replica, or null. */
  owner(cluster: string): string | null;
  /** The `shard` section of /status, built when health is. */
  status(): HubShardStatus;
}

/**
 * Where an engaged cluster came from; echoed into its health entry.
 *
 * @example
 * ```ts
 * import type { ClusterAccess, ClusterRegistration, Hub } from "../../../hub.ts";
 *
 * declare const hub: Hub;
 * declare const west: ClusterAccess;
 * const registration: ClusterRegistration = { provider: "secret", registeredAt: new Date().toISOString() };
 * await hub.engage("west", west, registration);
 * console.log(hub.health().clusters["west"]?.provider); // "secret"
 * ```
 */
export interface ClusterRegistration {
  /** `flag` (--clusters at start), `folder` (a kubeconfig file), `secret` (a labelled Secret), `cluster-profile` or `cluster-api`. */
  provider: string;
  /** ISO-8601. */
  registeredAt: string;
  /** The inventory's own health condition (a ClusterProfile's ControlPlaneHealthy), when the provider has one. */
  condition?: RegistrationCondition;
  /**
   * Whether the command line defines the cluster (a context of a `--kubeconfig` file or of $KUBECONFIG, `in-cluster`):
   * it holds readiness back and its errors are shown in full. Default: `provider` is `flag`. Any other cluster is
   * untrusted: it never makes the pod unready (unless HubReadiness.clusters is `all`), and its connection errors are
   * shown as one generic reason (the detail is logged at debug only).
   */
  commandLine?: boolean;
}

/**
 * A provider's condition for one cluster, as /status shows it (no credentials: type, status, reason, message).
 *
 * @example
 * ```ts
 * import type { ClusterAccess, Hub, RegistrationCondition } from "../../../hub.ts";
 *
 * declare const hub: Hub;
 * declare const edge: ClusterAccess;
 * const condition: RegistrationCondition = { type: "ControlPlaneHealthy", status: "False", reason: "Unreachable" };
 * await hub.engage("edge", edge, { provider: "cluster-profile", registeredAt: new Date().toISOString(), condition });
 * ```
 */
export interface RegistrationCondition {
  /** The condition's type, e.g. `ControlPlaneHealthy`. */
  type: string;
  /** `True`, `False` or `Unknown`. */
  status: string;
  /** The condition's machine-readable reason, when set. */
  reason?: string;
  /** The condition's human-readable message, when set. */
  message?: string;
}

/**
 * A name that is registered but cannot be engaged (a name collision, a broken kubeconfig, not registered yet).
 *
 * @example
 * ```ts
 * import type { Hub, RegistrationProblem } from "../../../hub.ts";
 *
 * declare const hub: Hub;
 * const problem: RegistrationProblem = {
 *   provider: "folder",
 *   error: "west is defined by both west.yaml and west-2.yaml; remove one of them",
 * };
 * hub.hold("west", problem);
 * console.log(hub.health().clusters["west"]?.state); // "registering"
 * hub.hold("west", undefined); // the problem is fixed
 * ```
 */
export interface RegistrationProblem extends Partial<ClusterRegistration> {
  /** Says what is wrong and how to fix it; never holds credentials. */
  error: string;
}

/**
 * The health entry of a cluster registered but not engaged yet: `registering`, and every operator too, with `error`
 * (a registration problem) as each one's lastError.
 */
export function notEngagedHealth(operators: Iterable<string>, error: string | null): ClusterHealth {
  const entries: Record<string, OperatorHealth> = {};
  for (const op of operators) {
    entries[op] = {
      state: "registering",
      synced: false,
      objects: 0,
      queue: 0,
      lastError: error,
      missingPermissions: [],
    };
  }
  return {
    state: "registering",
    synced: false,
    objects: 0,
    queue: 0,
    lastEventAgeSeconds: null,
    lastError: error,
    connectAttempts: 0,
    relists: 0,
    watchdogAborts: 0,
    missingPermissions: [],
    wedged: false,
    operators: entries,
  };
}

/** Only the registration fields (a problem also carries its error). */
export function registrationOf(r: Partial<ClusterRegistration>): Partial<ClusterRegistration> {
  return {
    ...(r.provider ? { provider: r.provider } : {}),
    ...(r.registeredAt ? { registeredAt: r.registeredAt } : {}),
    ...(r.condition ? { condition: r.condition } : {}),
  };
}

// The Hub's leader election: one Lease in the home cluster, its own client, and the leader gauge kept in step.

import { type ClusterAccess, type FetchLike, KubeClient, type PermissionCheck } from "../../kube/mod.ts";
import type { Clock, Logger } from "../../util/mod.ts";
import { type LeaderElectionSnapshot, LeaderElector, type LeaseSettings } from "./leader_election.ts";
import type { HubMetrics } from "../health/metrics.ts";

/**
 * One Lease, held in one "home" cluster, gates reconciling in every cluster of this hub.
 *
 * Why one home Lease: a Lease is a coordination object of one API server, and the hub's job is
 * "exactly one replica reconciles"; the pod's own cluster (in-cluster) is the natural home because
 * it is where the replicas run and the one cluster they can always reach. The gate is kept per
 * cluster (`#leads(cluster)`), so sharding (a later issue) swaps this for one LeaderElector per
 * cluster, each Lease in the cluster it gates, without touching the controller or the workers.
 *
 * @example Only the replica holding the Lease in prod reconciles
 * ```ts
 * import { Hub, type HubLeaderElection, Logger } from "../../../hub.ts";
 * import type { ClusterAccess } from "../../../kube.ts";
 *
 * declare const prod: ClusterAccess;
 * const leaderElection: HubLeaderElection = {
 *   cluster: "prod",
 *   access: prod,
 *   namespace: "operator-hub",
 *   name: "operator-hub-leader",
 *   identity: `${Deno.hostname()}_${crypto.randomUUID()}`,
 * };
 * const hub = new Hub({ leaderElection, logger: new Logger({ level: "info" }) });
 * console.log(hub.leading); // false until the Lease is held
 * ```
 */
export interface HubLeaderElection extends LeaseSettings {
  /** The engaged cluster that holds the Lease. */
  cluster: string;
  /** Credentials for it; the elector gets its own client, so renewals never queue behind watches. */
  access: ClusterAccess;
}

/** What a HomeLease needs besides the Lease's settings. */
export interface HomeLeaseOptions {
  clock: Clock;
  requestTimeoutMs: number;
  http2?: boolean;
  fetch?: FetchLike;
  logger: Logger;
  /** Its requests are counted in `rest_client_requests_total`; `leader_election_master_status` follows `leading`. */
  metrics: HubMetrics;
  /** Called each time `leading` changes, after it changed. */
  onChange(leading: boolean): void;
}

/**
 * Campaigns for the hub's Lease and says whether this replica leads.
 *
 * Guarantees: `leading` is false until the Lease is held; `onChange` is called once per change, never with the value
 * `leading` already had; `start` settles once the elector stopped (the Lease handed back) and its client is closed.
 */
export class HomeLease {
  readonly #le: HubLeaderElection;
  readonly #o: HomeLeaseOptions;
  readonly #client: KubeClient;
  readonly #elector: LeaderElector;
  #leading = false;

  constructor(le: HubLeaderElection, options: HomeLeaseOptions) {
    this.#le = le;
    this.#o = options;
    const m = options.metrics;
    // Its own client, so renewals never queue behind the cluster's watches.
    this.#client = new KubeClient(le.access, {
      clock: options.clock,
      requestTimeoutMs: options.requestTimeoutMs,
      logger: options.logger.child({ cluster: le.cluster }),
      userAgent: "operator-hub/leader-election",
      http2: options.http2,
      fetch: options.fetch,
      onResponse: ({ method, code }) => m.requests.inc(le.cluster, String(code), method),
    });
    m.leader.set({ name: le.name }, 0);
    this.#elector = new LeaderElector({
      api: this.#client,
      namespace: le.namespace,
      name: le.name,
      identity: le.identity,
      leaseDurationMs: le.leaseDurationMs,
      renewDeadlineMs: le.renewDeadlineMs,
      retryPeriodMs: le.retryPeriodMs,
      clock: options.clock,
      logger: options.logger.child({ cluster: le.cluster }),
      onStartedLeading: () => this.#set(true),
      onStoppedLeading: () => this.#set(false),
    });
  }

  /** Whether this replica holds the Lease. */
  get leading(): boolean {
    return this.#leading;
  }

  /** The `leaderElection` section of health. */
  snapshot(): LeaderElectionSnapshot & { cluster: string } {
    return { ...this.#elector.snapshot(), cluster: this.#le.cluster };
  }

  /** Campaigns and leads until `signal` aborts; then hands the Lease back and closes the client. */
  async start(signal: AbortSignal): Promise<void> {
    try {
      await this.#elector.start(signal);
    } catch (err) {
      this.#o.logger.error("leader election stopped unexpectedly", { error: err });
    }
    this.#client.close();
  }

  #set(leading: boolean): void {
    if (this.#leading === leading) return;
    this.#leading = leading;
    this.#o.metrics.leader.set({ name: this.#le.name }, leading ? 1 : 0);
    this.#o.onChange(leading);
  }
}

/** What the elector needs in the Lease's namespace, checked in the home cluster's pre-flight. */
export function leasePermissions(le: HubLeaderElection): PermissionCheck[] {
  return ["get", "create", "update"].map((verb) => ({
    verb,
    group: "coordination.k8s.io",
    resource: "leases",
    namespace: le.namespace,
  }));
}

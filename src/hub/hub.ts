// The Hub: engages and disengages clusters at runtime and drives one shared, fair controller over all of them.

import { type ClusterAccess, KubeClient, type PermissionCheck } from "../kube/mod.ts";
import { defaultControllerRateLimiter, FairWorkQueue, TokenBucket } from "../queue/mod.ts";
import { type ClusterContext, Controller, type EventLevel, type Operator } from "../runtime/mod.ts";
import { type Clock, type Logger, SystemClock } from "../util/mod.ts";
import { type ClusterHealth, ClusterWorker } from "./cluster_worker.ts";
import { type LeaderElectionSnapshot, LeaderElector } from "./leader_election.ts";
import { HubMetrics } from "./metrics.ts";

/** Tunables; every one has a default a newcomer never needs to change. */
export interface HubLimits {
  /** Reconciles running at once, across all clusters. Default 16. */
  concurrency: number;
  /** Process-wide reconciles per second, and burst. Default 500 / 1000. */
  qps: number;
  burst: number;
  /** Each cluster's API requests per second from reconcilers, and burst. Default 200 / 400. */
  clusterQps: number;
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
}

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
};

export interface HubOptions {
  operator: Operator;
  /** Namespaces to watch in every cluster; empty means all. */
  namespaces?: string[];
  limits?: Partial<HubLimits>;
  eventLevel?: EventLevel;
  /** When set, only the replica holding the Lease reconciles; the others keep watching (warm caches). */
  leaderElection?: HubLeaderElection;
  /** Offer HTTP/2 to the API servers instead of HTTP/1.1 keep-alive (`--http2`). Default false. */
  http2?: boolean;
  clock?: Clock;
  logger: Logger;
}

/**
 * One Lease, held in one "home" cluster, gates reconciling in every cluster of this hub.
 *
 * Why one home Lease: a Lease is a coordination object of one API server, and the hub's job is
 * "exactly one replica reconciles"; the pod's own cluster (in-cluster) is the natural home because
 * it is where the replicas run and the one cluster they can always reach. The gate is kept per
 * cluster (`#leads(cluster)`), so sharding (a later issue) swaps this for one LeaderElector per
 * cluster, each Lease in the cluster it gates, without touching the controller or the workers.
 */
export interface HubLeaderElection {
  /** The engaged cluster that holds the Lease. */
  cluster: string;
  /** Credentials for it; the elector gets its own client, so renewals never queue behind watches. */
  access: ClusterAccess;
  namespace: string;
  /** The Lease's name (`--leader-elect-id`). */
  name: string;
  /** This replica's identity: hostname + "_" + a random UUID. */
  identity: string;
  leaseDurationMs?: number;
  renewDeadlineMs?: number;
  retryPeriodMs?: number;
}

export type HubStatus = "ok" | "degraded" | "failing";

/** The aggregated health document served by /healthz, /readyz and /status. */
export interface HubHealth {
  status: HubStatus;
  ready: boolean;
  clusters: Record<string, ClusterHealth>;
  notReady?: string[];
  controller: { inFlight: number; queued: number; wedged: boolean };
  /** Present with --leader-elect. `leader: false` is a healthy standby: it watches but does not reconcile. */
  leaderElection?: LeaderElectionSnapshot & { cluster: string };
}

// --- registered clusters (issue 13) ---------------------------------------------------------------------------
/** Where an engaged cluster came from; echoed into its health entry. */
export interface ClusterRegistration {
  /** `flag` (--clusters at start), `folder` (a kubeconfig file) or `secret` (a labelled Secret). */
  provider: string;
  /** ISO-8601. */
  registeredAt: string;
}

/** A name that is registered but cannot be engaged (a name collision, a broken kubeconfig, not registered yet). */
export interface RegistrationProblem extends Partial<ClusterRegistration> {
  /** Says what is wrong and how to fix it; never holds credentials. */
  error: string;
}
// --- end registered clusters ------------------------------------------------------------------------------------

interface Engaged {
  worker: ClusterWorker;
  abort: AbortController;
  done: Promise<void>;
}

/**
 * Hosts one operator across many clusters.
 *
 * Guarantees:
 * - `engage` and `disengage` work before and after `start`; a disengaged cluster's watches, timers,
 *   sockets and queued keys are gone once `disengage` settles;
 * - a cluster that fails in any way only changes its own health entry;
 * - `start` settles after the controller drained (bounded) and every cluster stopped;
 * - with leader election, nothing is queued or started while this replica does not hold the Lease
 *   (its watches keep the stores current), everything stored is queued when it takes the Lease, and
 *   on shutdown the Lease is handed back only after in-flight reconciles drained.
 */
export class Hub {
  readonly metrics: HubMetrics;
  readonly limits: HubLimits;
  readonly #o: HubOptions;
  readonly #clock: Clock;
  readonly #queue: FairWorkQueue;
  readonly #controller: Controller;
  readonly #clusters = new Map<string, Engaged>();
  readonly #pending = new Map<string, ClusterAccess>();
  // --- registered clusters (issue 13) ---
  readonly #registrations = new Map<string, ClusterRegistration>();
  readonly #problems = new Map<string, RegistrationProblem>();
  // --- end registered clusters ---
  readonly #elector: LeaderElector | undefined;
  readonly #electorClient: KubeClient | undefined;
  /** Whether this replica may reconcile: always without leader election, else while it holds the Lease. */
  #leading: boolean;
  #running: AbortSignal | undefined;

  constructor(options: HubOptions) {
    this.#o = options;
    this.limits = { ...DEFAULT_LIMITS, ...options.limits };
    this.#clock = options.clock ?? new SystemClock();
    this.metrics = new HubMetrics(() => this.health().clusters);
    const m = this.metrics;
    const name = options.operator.name;
    this.#queue = new FairWorkQueue({
      clock: this.#clock,
      rateLimiter: defaultControllerRateLimiter({ clock: this.#clock, maxMs: this.limits.maxRetryDelayMs }),
      hooks: {
        added: (cluster) => m.adds.inc(name, cluster),
        handedOut: (cluster, waitedMs) => m.queueDuration.observe(waitedMs / 1000, name, cluster),
        retried: (cluster) => m.retries.inc(name, cluster),
        depthChanged: (cluster, depth) => m.depth.set(depth, name, cluster),
      },
    });
    this.#controller = new Controller({
      reconciler: options.operator.reconciler,
      queue: this.#queue,
      cluster: (c) => this.#context(c),
      concurrency: this.limits.concurrency,
      budget: new TokenBucket(this.limits.qps, this.limits.burst, { clock: this.#clock }),
      reconcileTimeoutMs: this.limits.reconcileTimeoutMs,
      drainTimeoutMs: this.limits.drainTimeoutMs,
      clock: this.#clock,
      logger: options.logger,
      observer: {
        reconciled: (cluster, outcome, seconds) => {
          m.reconcileTotal.inc(name, cluster, outcome);
          if (outcome === "error" || outcome === "terminal") m.reconcileErrors.inc(name, cluster);
          m.reconcileTime.observe(seconds, name, cluster);
        },
      },
    });
    const le = options.leaderElection;
    this.#leading = !le;
    if (le) {
      this.#electorClient = new KubeClient(le.access, {
        clock: this.#clock,
        requestTimeoutMs: this.limits.requestTimeoutMs,
        logger: options.logger.child({ cluster: le.cluster }),
        userAgent: "operator-hub/leader-election",
        http2: options.http2,
        onResponse: ({ method, code }) => m.requests.inc(le.cluster, String(code), method),
      });
      m.leader.set({ name: le.name }, 0);
      this.#elector = new LeaderElector({
        api: this.#electorClient,
        namespace: le.namespace,
        name: le.name,
        identity: le.identity,
        leaseDurationMs: le.leaseDurationMs,
        renewDeadlineMs: le.renewDeadlineMs,
        retryPeriodMs: le.retryPeriodMs,
        clock: this.#clock,
        logger: options.logger.child({ cluster: le.cluster }),
        onStartedLeading: () => this.#setLeading(true),
        onStoppedLeading: () => this.#setLeading(false),
      });
    }
  }

  /** Whether this replica currently reconciles (always true without leader election). */
  get leading(): boolean {
    return this.#leading;
  }

  /** Cluster names currently engaged. */
  clusters(): string[] {
    return [...this.#clusters.keys(), ...this.#pending.keys()];
  }

  /**
   * Starts serving a cluster (now if running, else at `start`). Re-engaging a name replaces it.
   * `registration` (issue 13) is shown in the cluster's health entry as `provider` and `registeredAt`.
   */
  async engage(name: string, access: ClusterAccess, registration?: ClusterRegistration): Promise<void> {
    if (this.#clusters.has(name) || this.#pending.has(name)) await this.disengage(name);
    // --- registered clusters (issue 13) ---
    this.#problems.delete(name);
    if (registration) this.#registrations.set(name, registration);
    // --- end registered clusters ---
    if (!this.#running) {
      this.#pending.set(name, access);
      return;
    }
    this.#launch(name, access, this.#running);
  }

  /** Stops serving a cluster and settles once all of its work is gone. */
  async disengage(name: string): Promise<void> {
    this.#pending.delete(name);
    this.#registrations.delete(name); // issue 13
    const e = this.#clusters.get(name);
    if (!e) return;
    this.#clusters.delete(name);
    e.abort.abort();
    this.#queue.removeCluster(name);
    await e.done;
    this.metrics.forgetCluster(name);
    this.#o.logger.info("cluster disengaged", { cluster: name });
  }

  // --- registered clusters (issue 13) ---
  /**
   * Shows `name` in health as `registering` with `problem.error` while it is not engaged (a name collision, a broken
   * kubeconfig, a selected name no provider has registered yet); `undefined` removes the entry. An engaged cluster
   * of that name is not touched: disengage it first.
   */
  hold(name: string, problem: RegistrationProblem | undefined): void {
    if (problem) this.#problems.set(name, problem);
    else this.#problems.delete(name);
  }
  // --- end registered clusters ---

  /** Runs until `signal` aborts. */
  async start(signal: AbortSignal): Promise<void> {
    const clustersStop = new AbortController();
    this.#running = clustersStop.signal;
    for (const [name, access] of this.#pending) this.#launch(name, access, clustersStop.signal);
    this.#pending.clear();
    const electionStop = new AbortController();
    const election = this.#elector?.start(electionStop.signal).catch((err) => {
      this.#o.logger.error("leader election stopped unexpectedly", { error: err });
    });
    // The controller stops first, so in-flight reconciles drain while their clients are still open,
    // and while this replica still holds the Lease; only then is the Lease handed back.
    await this.#controller.start(signal);
    this.#queue.shutDown();
    electionStop.abort();
    await election;
    this.#electorClient?.close();
    clustersStop.abort();
    await Promise.all([...this.#clusters.values()].map((e) => e.done));
    this.#clusters.clear();
    this.#running = undefined;
  }

  #launch(name: string, access: ClusterAccess, parent: AbortSignal): void {
    const abort = new AbortController();
    const onParent = () => abort.abort();
    parent.addEventListener("abort", onParent, { once: true });
    const worker = new ClusterWorker(name, access, {
      operator: this.#o.operator,
      namespaces: this.#o.namespaces ?? [],
      extraPermissions: this.#o.leaderElection?.cluster === name ? leasePermissions(this.#o.leaderElection) : [],
      // A standby keeps its store current but queues nothing; on taking over it queues every key.
      onChange: (cluster, keys) => {
        if (this.#leads(cluster)) this.#controller.enqueue(cluster, keys);
      },
      apiBudget: new TokenBucket(this.limits.clusterQps, this.limits.clusterBurst, { clock: this.#clock }),
      eventLevel: this.#o.eventLevel,
      idleTimeoutMs: this.limits.watchIdleTimeoutMs,
      requestTimeoutMs: this.limits.requestTimeoutMs,
      http2: this.#o.http2,
      clock: this.#clock,
      logger: this.#o.logger,
      onResponse: ({ method, code }) => this.metrics.requests.inc(name, String(code), method),
    });
    const done = worker.start(abort.signal).catch((err) => {
      this.#o.logger.error("cluster worker stopped unexpectedly", { cluster: name, error: err });
    }).finally(() => parent.removeEventListener("abort", onParent));
    this.#clusters.set(name, { worker, abort, done });
    this.#o.logger.info("cluster engaged", { cluster: name, server: access.server });
  }

  #context(cluster: string): ClusterContext | undefined {
    // A key dequeued after leadership was lost is dropped (the controller forgets it).
    if (!this.#leads(cluster)) return undefined;
    return this.#clusters.get(cluster)?.worker.context;
  }

  /** The per-cluster reconcile gate. One home Lease today, so every cluster follows it. */
  #leads(_cluster: string): boolean {
    return this.#leading;
  }

  /**
   * Opens or closes the gate. Opening queues every object already in the stores (the watches kept
   * them current while standing by); closing drops everything queued, so nothing new starts.
   * Reconciles already running finish: each writes at most once, guarded by resourceVersion.
   */
  #setLeading(leading: boolean): void {
    if (this.#leading === leading) return;
    this.#leading = leading;
    const le = this.#o.leaderElection!;
    this.metrics.leader.set({ name: le.name }, leading ? 1 : 0);
    for (const [name, e] of this.#clusters) {
      if (leading) this.#controller.enqueue(name, e.worker.store.keys());
      else this.#queue.removeCluster(name);
    }
  }

  /** The aggregated health of every cluster and of the shared controller. */
  health(): HubHealth {
    const wedgedAfterMs = this.limits.watchIdleTimeoutMs * 2 + 60_000;
    const clusters: Record<string, ClusterHealth> = {};
    for (const [name, e] of this.#clusters) {
      clusters[name] = e.worker.health(this.#queue.lenFor(name), wedgedAfterMs);
      // issue 13: `registering` until the first pre-flight attempt.
      if (clusters[name].connectAttempts === 0 && clusters[name].state === "connecting") {
        clusters[name].state = "registering";
      }
    }
    for (const name of this.#pending.keys()) {
      clusters[name] = {
        state: "registering",
        synced: false,
        objects: 0,
        queue: 0,
        lastEventAgeSeconds: null,
        lastError: null,
        connectAttempts: 0,
        relists: 0,
        watchdogAborts: 0,
        missingPermissions: [],
        wedged: false,
      };
    }
    // --- registered clusters (issue 13) ---
    for (const [name, p] of this.#problems) {
      if (clusters[name]) continue;
      clusters[name] = {
        state: "registering",
        synced: false,
        objects: 0,
        queue: 0,
        lastEventAgeSeconds: null,
        lastError: p.error,
        connectAttempts: 0,
        relists: 0,
        watchdogAborts: 0,
        missingPermissions: [],
        wedged: false,
      };
      if (p.provider) clusters[name].provider = p.provider;
      if (p.registeredAt) clusters[name].registeredAt = p.registeredAt;
    }
    for (const [name, r] of this.#registrations) {
      if (clusters[name]) Object.assign(clusters[name], r);
    }
    // --- end registered clusters ---
    const queued = this.#queue.len();
    const idleFor = this.#clock.now() - this.#controller.lastCompletedAt;
    const controllerWedged = queued > 0 && this.#controller.inFlight === 0 &&
      idleFor > this.limits.reconcileTimeoutMs * 2 + 60_000 && this.#running !== undefined;
    const notReady = Object.entries(clusters).filter(([, h]) => !h.synced).map(([n]) => n);
    const failing = controllerWedged || Object.values(clusters).some((h) => h.wedged);
    const degraded = Object.values(clusters).some((h) => h.state !== "watching");
    return {
      status: failing ? "failing" : degraded ? "degraded" : "ok",
      ready: notReady.length === 0 && Object.keys(clusters).length > 0,
      clusters,
      ...(notReady.length ? { notReady } : {}),
      controller: { inFlight: this.#controller.inFlight, queued, wedged: controllerWedged },
      ...(this.#elector
        ? { leaderElection: { ...this.#elector.snapshot(), cluster: this.#o.leaderElection!.cluster } }
        : {}),
    };
  }
}

/** What the elector needs in the Lease's namespace, checked in the home cluster's pre-flight. */
function leasePermissions(le: HubLeaderElection): PermissionCheck[] {
  return ["get", "create", "update"].map((verb) => ({
    verb,
    group: "coordination.k8s.io",
    resource: "leases",
    namespace: le.namespace,
  }));
}

// The Hub: hosts several operators, engages and disengages clusters at runtime, and drives one shared, fair controller.

import type { ClusterAccess } from "../kube/mod.ts";
import { defaultControllerRateLimiter, FairWorkQueue, TokenBucket } from "../queue/mod.ts";
import { Controller, type Operator, type ReconcileTarget } from "../runtime/mod.ts";
import { type Clock, SystemClock } from "../util/mod.ts";
import type { ProviderHealth } from "./health/cluster_health.ts";
import { HubMetrics } from "./health/metrics.ts";
import { BackgroundStops } from "./cluster/_background_stops.ts";
import { ClusterLauncher, type Engaged } from "./cluster/_cluster_launch.ts";
import { HomeLease } from "./leadership/_home_lease.ts";
import { HubHealthView } from "./health/_hub_health_view.ts";
import { QueueSeries } from "./health/_queue_series.ts";
import { ShardPause } from "./shards/_shard_pause.ts";
import { ReadinessRule } from "./health/_readiness_rule.ts";
import type { ClusterRegistration, HubHealth, HubShardView, RegistrationProblem } from "./health/hub_health.ts";
import { DEFAULT_LIMITS, type HubLimits, type ScaledLimit, scaledLimit } from "./hub_limits.ts";
import type { ClusterObserver, HubOptions } from "./hub_options.ts";

export * from "./health/hub_health.ts";
export * from "./hub_limits.ts";
export type { HubLeaderElection } from "./leadership/_home_lease.ts";
export type { ClusterObserver, HubOptions, HubReadiness } from "./hub_options.ts";

/**
 * Hosts several operators across many clusters.
 *
 * Guarantees:
 * - every operator gets, in every engaged cluster, its own pre-flight, watch (shared with operators of
 *   the same resource) and health entry; one operator's missing CRD or permission leaves the others
 *   running there;
 * - `engage` and `disengage` work before and after `start`; a disengaged cluster's watches, timers,
 *   sockets and queued keys are gone once `disengage` settles;
 * - a cluster that fails in any way only changes its own health entry;
 * - `start` settles after the controller drained (bounded) and every cluster stopped;
 * - with leader election, nothing is queued or started while this replica does not hold the Lease
 *   (its watches keep the stores current), everything stored is queued when it takes the Lease, and
 *   on shutdown the Lease is handed back only after in-flight reconciles drained;
 * - background tasks (daemons) run only where this replica reconciles: their signals abort when a cluster is
 *   disengaged (`disengage` settles once they ended or their grace period passed), paused, when leadership is lost
 *   and as soon as `start`'s signal aborts;
 * - readiness (`health().ready`) waits for the hub itself (its home cluster, the Lease's cluster, every cluster
 *   provider's first read) and the clusters the command line names or defines; any other cluster a provider
 *   registered never holds it back unless `readiness.clusters` is `all` (see HubReadiness);
 * - a cluster the command line does not define (untrusted) shows its connection errors in health, and in the logs
 *   above debug, as one generic reason (see _untrusted_errors.ts), the detail at debug only, named or not.
 *
 * @example
 * ```ts
 * import { Hub, Logger } from "../../hub.ts";
 * import type { ClusterAccess, Operator } from "../../hub.ts";
 *
 * declare const greetings: Operator;
 * declare const prod: ClusterAccess;
 * const hub = new Hub({ operators: [greetings], logger: new Logger({ level: "info" }) });
 * await hub.engage("prod", prod);
 * const stop = new AbortController();
 * const running = hub.start(stop.signal);
 * console.log(hub.clusters(), hub.health().ready); // ["prod"] false until its first list
 * stop.abort();
 * await running; // the controller drained and every cluster stopped
 * ```
 */
export class Hub {
  /**
   * The Prometheus registry and series, served on /metrics.
   * @ignore
   */
  readonly metrics: HubMetrics;
  /**
   * The limits in effect: the options' overrides, else DEFAULT_LIMITS, with `concurrency`, `qps` and `burst` scaled
   * by the clusters engaged now when not given (updated in place as clusters come and go).
   */
  readonly limits: HubLimits;
  /** The limits that scale with the clusters (those the options did not give). */
  readonly #scaled: ScaledLimit[];
  readonly #budget: TokenBucket;
  readonly #o: HubOptions;
  readonly #clock: Clock;
  readonly #queue: FairWorkQueue;
  readonly #controller: Controller;
  readonly #clusters = new Map<string, Engaged>();
  readonly #pending = new Map<string, ClusterAccess>();
  /** Where each registered cluster came from (providers), and names held back with a problem. */
  readonly #registrations = new Map<string, ClusterRegistration>();
  readonly #problems = new Map<string, RegistrationProblem>();
  readonly #operators = new Map<string, Operator>();
  /** Per cluster and operator: keys queued (added minus handed out), for metrics and health. */
  readonly #series: QueueSeries;
  /** Without leader election, this replica always reconciles; with it, while it holds the Lease. */
  readonly #lease: HomeLease | undefined;
  /** Clusters paused by the shard layer (`--shard-warm`: watched, not reconciled). */
  readonly #pause = new ShardPause();
  #running: AbortSignal | undefined;
  readonly #observers: ClusterObserver[] = [];
  /** Per cluster: its background tasks stopping now (see `backgroundStopped`). */
  readonly #backgroundStops: BackgroundStops;
  /** Builds and starts engaged clusters (shared pre-flight gate, untrusted clusters' first-contact summary). */
  readonly #launcher: ClusterLauncher;
  /** Health, with readiness (see HubReadiness) and who is trusted. */
  readonly #view: HubHealthView;

  /** Builds a hub; nothing runs until `start`. Throws when two operators share a name. */
  constructor(options: HubOptions) {
    this.#o = options;
    this.limits = { ...DEFAULT_LIMITS, ...options.limits };
    this.#scaled = (["concurrency", "qps", "burst"] as const).filter((k) => options.limits?.[k] === undefined);
    this.#clock = options.clock ?? new SystemClock();
    this.#backgroundStops = new BackgroundStops(options.logger);
    this.#launcher = new ClusterLauncher({
      hub: options,
      limits: this.limits,
      clock: this.#clock,
      onResponse: (name, { method, code }) => this.metrics.requests.inc(name, String(code), method),
      operators: () => [...this.#operators.values()],
      // A standby keeps its caches current but queues nothing; on taking over it queues every key.
      onChange: (operator, requests, priority) => {
        const leads = requests.every((r) => this.#leads(r.cluster))
          ? requests
          : requests.filter((r) => this.#leads(r.cluster));
        this.#controller.enqueue(operator, leads, priority);
      },
      lookup: (other) => this.#clusters.get(other)?.cluster,
      clusterNames: () => [...this.#clusters.keys()],
    });
    this.#budget = new TokenBucket(this.limits.qps, this.limits.burst, { clock: this.#clock });
    this.metrics = new HubMetrics(() => this.health().clusters);
    const m = this.metrics;
    for (const op of options.operators ?? []) this.register(op);
    this.#series = new QueueSeries(m);
    this.#queue = new FairWorkQueue({
      clock: this.#clock,
      rateLimiter: defaultControllerRateLimiter({ clock: this.#clock, maxMs: this.limits.maxRetryDelayMs }),
      hooks: this.#series.hooks,
    });
    this.#controller = new Controller({
      queue: this.#queue,
      target: (cluster, operator) => this.#target(cluster, operator),
      concurrency: this.limits.concurrency,
      budget: this.#budget,
      reconcileTimeoutMs: this.limits.reconcileTimeoutMs,
      drainTimeoutMs: this.limits.drainTimeoutMs,
      clock: this.#clock,
      logger: options.logger,
      observer: {
        reconciled: (cluster, operator, outcome, seconds) => {
          m.reconcileTotal.inc(operator, cluster, outcome);
          if (outcome === "error" || outcome === "terminal") m.reconcileErrors.inc(operator, cluster);
          m.reconcileTime.observe(seconds, operator, cluster);
        },
      },
    });
    const le = options.leaderElection;
    this.#lease = le
      ? new HomeLease(le, {
        clock: this.#clock,
        requestTimeoutMs: this.limits.requestTimeoutMs,
        http2: options.http2,
        fetch: options.fetch,
        logger: options.logger,
        metrics: m,
        onChange: (leading) => this.#leadingChanged(leading),
      })
      : undefined;
    this.#view = new HubHealthView({
      clusters: this.#clusters,
      pending: this.#pending,
      registrations: this.#registrations,
      problems: this.#problems,
      operators: this.#operators,
      series: this.#series,
      queue: this.#queue,
      controller: this.#controller,
      limits: this.limits,
      clock: this.#clock,
      readiness: new ReadinessRule(options.readiness, le?.cluster),
      lease: this.#lease,
      running: () => this.#running !== undefined,
    });
  }

  /**
   * Adds an operator; call it before `start` (clusters engaged earlier pick it up too). Throws on a
   * duplicate or invalid name, and once the hub runs.
   */
  register(operator: Operator): void {
    if (this.#running) throw new Error(`cannot register operator ${operator.name}: the hub is already running`);
    if (!/^[a-z0-9]([a-z0-9.-]*[a-z0-9])?$/.test(operator.name)) {
      throw new TypeError(
        `invalid operator name ${JSON.stringify(operator.name)}: use lowercase letters, digits, "-" and "."`,
      );
    }
    if (this.#operators.has(operator.name)) {
      throw new Error(`cannot register operator ${operator.name}: an operator of that name is already registered`);
    }
    this.#operators.set(operator.name, operator);
  }

  /** The names of the operators hosted, in registration order. */
  operators(): string[] {
    return [...this.#operators.keys()];
  }

  /** Whether this replica currently reconciles (always true without leader election). */
  get leading(): boolean {
    return this.#lease?.leading ?? true;
  }

  /** Cluster names currently engaged. */
  clusters(): string[] {
    return [...this.#clusters.keys(), ...this.#pending.keys()];
  }

  /**
   * Starts serving a cluster (now if running, else at `start`). Re-engaging a name replaces it.
   * `registration` is shown in the cluster's health entry as `provider` and `registeredAt`; without one the cluster
   * is the embedder's own, trusted as the command line's (see ClusterRegistration.commandLine).
   */
  async engage(name: string, access: ClusterAccess, registration?: ClusterRegistration): Promise<void> {
    if (this.#clusters.has(name) || this.#pending.has(name)) await this.disengage(name);
    this.#problems.delete(name);
    if (registration) this.#registrations.set(name, registration);
    if (!this.#running) {
      this.#pending.set(name, access);
      return;
    }
    this.#launch(name, access, this.#running);
  }

  /**
   * Stops serving a cluster and settles once all of its work is gone. The stop is synchronous: before this returns
   * its promise, the cluster's watches are aborted, its queue dropped and its client closed, so a reconcile still
   * running there fails its next request and writes nothing more.
   */
  async disengage(name: string): Promise<void> {
    this.#pending.delete(name);
    this.#registrations.delete(name);
    const e = this.#clusters.get(name);
    if (!e) return;
    this.#clusters.delete(name);
    for (const o of this.#observers) o.disengaged(name);
    this.#scale();
    this.#backgroundStops.stop(e.cluster);
    e.abort.abort();
    this.#pause.disengaged(name);
    e.cluster.closeClient();
    this.#dropQueued(name);
    await e.done;
    this.metrics.forgetCluster(name);
    this.#series.forget(name);
    this.#o.logger.info("cluster disengaged", { cluster: name });
  }

  /**
   * Shows `name` in health as `registering` with `problem.error` while it is not engaged (a name collision, a broken
   * kubeconfig, a selected name no provider has registered yet); `undefined` removes the entry. An engaged cluster
   * of that name is not touched: disengage it first.
   */
  hold(name: string, problem: RegistrationProblem | undefined): void {
    if (problem) this.#problems.set(name, problem);
    else this.#problems.delete(name);
  }

  /**
   * Adds the `admission` section to health (the webhook installer's state): `read` is asked each time.
   * @ignore
   */
  showAdmission(read: () => Record<string, unknown>): void {
    this.#view.admission = read;
  }

  /**
   * Tells `observer` of every cluster engaged here from now on (at launch) and of every disengage.
   * @ignore
   */
  observeClusters(observer: ClusterObserver): void {
    this.#observers.push(observer);
  }

  /** Adds the `providers` section to health: `read` is asked each time health is built. */
  showProviders(read: () => Record<string, ProviderHealth>): void {
    this.#view.providers = read;
  }

  /**
   * Stops reconciling in `name` (engaged or not yet) while its watches go on: queued keys dropped, running
   * reconciles cancelled, nothing queued until `resume`. The shard layer's `--shard-warm` uses it.
   */
  pause(name: string): void {
    this.#pause.pause(name);
    const e = this.#clusters.get(name);
    if (!e) return;
    this.#dropQueued(name);
    this.#backgroundStops.stop(e.cluster);
  }

  /** Reconciles in `name` again, queueing every object its watches hold. */
  resume(name: string): void {
    if (!this.#pause.resume(name)) return;
    const cluster = this.#clusters.get(name)?.cluster;
    if (!cluster || !this.#leads(name)) return;
    cluster.openBackground();
    cluster.requeueAll();
  }

  /** With --shard: where `/status` reads each cluster's owner and the `shard` section. */
  useShardView(view: HubShardView): void {
    this.#view.shard = view;
  }

  /** Runs until `signal` aborts. */
  async start(signal: AbortSignal): Promise<void> {
    const clustersStop = new AbortController();
    this.#running = clustersStop.signal;
    for (const [name, access] of this.#pending) this.#launch(name, access, clustersStop.signal);
    this.#pending.clear();
    const electionStop = new AbortController();
    const election = this.#lease?.start(electionStop.signal);
    // Background tasks (daemons) are told at once, while the controller drains.
    const stopBackground = () => {
      for (const e of this.#clusters.values()) this.#backgroundStops.stop(e.cluster);
    };
    signal.addEventListener("abort", stopBackground, { once: true });
    // The controller stops first, so in-flight reconciles drain while their clients are still open,
    // and while this replica still holds the Lease; only then is the Lease handed back.
    await this.#controller.start(signal);
    signal.removeEventListener("abort", stopBackground);
    this.#queue.shutDown();
    electionStop.abort();
    await election;
    clustersStop.abort();
    await Promise.all([...this.#clusters.values()].map((e) => e.done));
    this.#clusters.clear();
    this.#running = undefined;
    this.#launcher.flush();
  }

  #launch(name: string, access: ClusterAccess, parent: AbortSignal): void {
    this.#clusters.set(name, this.#launcher.launch(name, access, parent, this.#view.commandLine(name)));
    for (const o of this.#observers) o.engaged(name, access);
    this.#pause.engaged(name);
    this.#scale();
    this.#o.logger.info("cluster engaged", { cluster: name, server: access.server });
  }

  /** Sizes the limits not given in the options to the clusters engaged now (at least one). */
  #scale(): void {
    if (this.#scaled.length === 0) return;
    for (const k of this.#scaled) this.limits[k] = scaledLimit(k, this.#clusters.size);
    if (this.#controller.concurrency !== this.limits.concurrency) {
      this.#controller.setConcurrency(this.limits.concurrency);
    }
    if (this.#budget.qps !== this.limits.qps || this.#budget.burst !== this.limits.burst) {
      this.#budget.setRate(this.limits.qps, this.limits.burst);
    }
  }

  #target(cluster: string, operator: string): ReconcileTarget | undefined {
    // A key dequeued after leadership was lost is dropped (the controller forgets it).
    if (!this.#leads(cluster)) return undefined;
    // Paused clusters (--shard-warm) cancel their running reconciles: each is bound to the cluster's pause signal.
    return this.#pause.bind(cluster, this.#clusters.get(cluster)?.cluster.target(operator));
  }

  /** Drops a cluster's queued keys and zeroes its depth counts. */
  #dropQueued(cluster: string): void {
    this.#queue.removeCluster(cluster);
    this.#series.zero(cluster);
  }

  /** The per-cluster reconcile gate: the home Lease (leader election) and the shard's pause. */
  #leads(cluster: string): boolean {
    return this.leading && !this.#pause.has(cluster);
  }

  /**
   * The gate opened or closed. Opening queues every object already in the stores (the watches kept
   * them current while standing by); closing drops everything queued, so nothing new starts.
   * Reconciles already running finish: each writes at most once, guarded by resourceVersion.
   */
  #leadingChanged(leading: boolean): void {
    for (const [name, e] of this.#clusters) {
      if (leading) {
        if (this.#pause.has(name)) continue;
        e.cluster.openBackground();
        e.cluster.requeueAll();
      } else {
        this.#dropQueued(name);
        this.#backgroundStops.stop(e.cluster);
      }
    }
  }

  /**
   * Settles once the background tasks (daemons) of `name` stopped by its last disengage or pause ended, or their grace
   * period passed; at once when none are stopping. The shard layer frees a cluster's fence only then, so the next
   * owner never starts a daemon while this replica's still runs (one that honours its signal within the grace).
   */
  backgroundStopped(name: string): Promise<void> {
    return this.#backgroundStops.stopped(name);
  }

  /** The aggregated health of every cluster and of the shared controller. */
  health(): HubHealth {
    return this.#view.build();
  }
}

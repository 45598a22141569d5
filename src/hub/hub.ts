// The Hub: engages and disengages clusters at runtime and drives one shared, fair controller over all of them.

import type { ClusterAccess } from "../kube/mod.ts";
import { defaultControllerRateLimiter, FairWorkQueue, TokenBucket } from "../queue/mod.ts";
import { type ClusterContext, Controller, type EventLevel, type Operator } from "../runtime/mod.ts";
import { type Clock, type Logger, SystemClock } from "../util/mod.ts";
import { type ClusterHealth, ClusterWorker } from "./cluster_worker.ts";
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
  clock?: Clock;
  logger: Logger;
}

export type HubStatus = "ok" | "degraded" | "failing";

/** The aggregated health document served by /healthz, /readyz and /status. */
export interface HubHealth {
  status: HubStatus;
  ready: boolean;
  clusters: Record<string, ClusterHealth>;
  notReady?: string[];
  controller: { inFlight: number; queued: number; wedged: boolean };
}

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
 * - `start` settles after the controller drained (bounded) and every cluster stopped.
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
        added: (cluster) => m.adds.inc({ name, cluster }),
        handedOut: (cluster, waitedMs) => m.queueDuration.observe({ name, cluster }, waitedMs / 1000),
        retried: (cluster) => m.retries.inc({ name, cluster }),
        depthChanged: (cluster, depth) => m.depth.set({ name, cluster }, depth),
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
          m.reconcileTotal.inc({ controller: name, cluster, result: outcome });
          if (outcome === "error" || outcome === "terminal") m.reconcileErrors.inc({ controller: name, cluster });
          m.reconcileTime.observe({ controller: name, cluster }, seconds);
        },
      },
    });
  }

  /** Cluster names currently engaged. */
  clusters(): string[] {
    return [...this.#clusters.keys(), ...this.#pending.keys()];
  }

  /** Starts serving a cluster (now if running, else at `start`). Re-engaging a name replaces it. */
  async engage(name: string, access: ClusterAccess): Promise<void> {
    if (this.#clusters.has(name) || this.#pending.has(name)) await this.disengage(name);
    if (!this.#running) {
      this.#pending.set(name, access);
      return;
    }
    this.#launch(name, access, this.#running);
  }

  /** Stops serving a cluster and settles once all of its work is gone. */
  async disengage(name: string): Promise<void> {
    this.#pending.delete(name);
    const e = this.#clusters.get(name);
    if (!e) return;
    this.#clusters.delete(name);
    e.abort.abort();
    this.#queue.removeCluster(name);
    await e.done;
    await this.metrics.forgetCluster(name);
    this.#o.logger.info("cluster disengaged", { cluster: name });
  }

  /** Runs until `signal` aborts. */
  async start(signal: AbortSignal): Promise<void> {
    const clustersStop = new AbortController();
    this.#running = clustersStop.signal;
    for (const [name, access] of this.#pending) this.#launch(name, access, clustersStop.signal);
    this.#pending.clear();
    // The controller stops first, so in-flight reconciles drain while their clients are still open.
    await this.#controller.start(signal);
    this.#queue.shutDown();
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
      onChange: (cluster, keys) => this.#controller.enqueue(cluster, keys),
      apiBudget: new TokenBucket(this.limits.clusterQps, this.limits.clusterBurst, { clock: this.#clock }),
      eventLevel: this.#o.eventLevel,
      idleTimeoutMs: this.limits.watchIdleTimeoutMs,
      requestTimeoutMs: this.limits.requestTimeoutMs,
      clock: this.#clock,
      logger: this.#o.logger,
      onResponse: ({ method, code }) => this.metrics.requests.inc({ cluster: name, code: String(code), method }),
    });
    const done = worker.start(abort.signal).catch((err) => {
      this.#o.logger.error("cluster worker stopped unexpectedly", { cluster: name, error: err });
    }).finally(() => parent.removeEventListener("abort", onParent));
    this.#clusters.set(name, { worker, abort, done });
    this.#o.logger.info("cluster engaged", { cluster: name, server: access.server });
  }

  #context(cluster: string): ClusterContext | undefined {
    return this.#clusters.get(cluster)?.worker.context;
  }

  /** The aggregated health of every cluster and of the shared controller. */
  health(): HubHealth {
    const wedgedAfterMs = this.limits.watchIdleTimeoutMs * 2 + 60_000;
    const clusters: Record<string, ClusterHealth> = {};
    for (const [name, e] of this.#clusters) {
      clusters[name] = e.worker.health(this.#queue.lenFor(name), wedgedAfterMs);
    }
    for (const name of this.#pending.keys()) {
      clusters[name] = {
        state: "connecting",
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
    };
  }
}

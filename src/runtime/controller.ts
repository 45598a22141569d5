// The controller loop: workers take fair keys from the shared queue, spend the global budget, and reconcile.

import type { FairWorkQueue, QueueKey, QueuePriority, Request, TokenBucket } from "../queue/mod.ts";
import { type Clock, errorText, type Logger, SystemClock } from "../util/mod.ts";
import {
  type BackgroundTasks,
  type ClusterConnection,
  type EventSink,
  type Reconciler,
  TerminalError,
} from "./reconciler.ts";
import type { KubeResourceClient } from "./kube_resource_client.ts";

export type ReconcileOutcome = "success" | "error" | "requeue_after" | "terminal";

/** Hooks for metrics; all optional. */
export interface ControllerObserver {
  reconciled?(cluster: string, operator: string, outcome: ReconcileOutcome, seconds: number): void;
}

/** What reconciling one operator's objects in one cluster needs; built once per cluster and operator. */
export interface ReconcileTarget {
  readonly reconciler: Reconciler;
  /** The operator's typed client in this cluster; each reconcile gets it bound to its own signal. */
  readonly client: KubeResourceClient;
  readonly events: EventSink;
  /** Any engaged cluster by name, for the reconcile's `cluster(name)`; bound to the reconcile's signal. */
  cluster(name: string, signal: AbortSignal): ClusterConnection | undefined;
  /** The names of every engaged cluster, for the reconcile's `clusters()`. Default: just this one's connections. */
  clusters?(): string[];
  /** The operator's background tasks in this cluster, for the reconcile's `background`. */
  readonly background?: BackgroundTasks;
}

export interface ControllerOptions {
  queue: FairWorkQueue;
  /**
   * Looks up what reconciles a key's cluster and operator; undefined once the cluster is disengaged,
   * or while this replica may not reconcile there (the key is then forgotten).
   */
  target(cluster: string, operator: string): ReconcileTarget | undefined;
  /** Reconciles running at once across all clusters, until `setConcurrency` changes it. Default 16. */
  concurrency?: number;
  /** Process-wide reconcile rate budget shared by every cluster. */
  budget?: TokenBucket;
  /** A reconcile running longer is abandoned, its signal aborted, and retried. Default 30 s. */
  reconcileTimeoutMs?: number;
  /** On shutdown, in-flight reconciles get this long to finish. Default 10 s. */
  drainTimeoutMs?: number;
  clock?: Clock;
  logger: Logger;
  observer?: ControllerObserver;
}

/** Raised into a reconcile's signal when it runs past the timeout. */
class ReconcileTimeoutError extends Error {
  override name = "ReconcileTimeoutError";
}

/**
 * Runs `concurrency` workers over the shared queue.
 *
 * Guarantees: a key is processed by one worker at a time (the queue's contract); success calls
 * `forget`; an error requeues with per-item backoff; a TerminalError is not retried; a reconcile
 * that hangs past the timeout frees its worker, so it never blocks the queue.
 */
export class Controller {
  readonly #o: ControllerOptions;
  readonly #clock: Clock;
  #seq = 0;
  #inFlight = 0;
  #lastCompletedAt: number;
  /** The signals of the reconciles running now; aborted together when the drain deadline passes. */
  readonly #running = new Set<AbortController>();
  /** Workers wanted; a worker whose number is at or above it exits before taking its next key. */
  #concurrency: number;
  /** The workers alive now by number, each with what retires it (aborts its wait for a key). */
  readonly #workers = new Map<number, AbortController>();
  #spawn: ((n: number) => void) | undefined;

  constructor(options: ControllerOptions) {
    this.#o = options;
    this.#clock = options.clock ?? new SystemClock();
    this.#lastCompletedAt = this.#clock.now();
    this.#concurrency = options.concurrency ?? 16;
  }

  /** Reconciles allowed at once now. */
  get concurrency(): number {
    return this.#concurrency;
  }

  /**
   * Changes how many reconciles run at once (the hub scales it with the clusters engaged). More workers start at
   * once; when lowered, the extra workers finish the reconcile they hold, if any, and take no new key.
   */
  setConcurrency(n: number): void {
    if (!(n >= 1) || !Number.isInteger(n)) {
      throw new RangeError(`cannot set the controller's concurrency: a whole number of at least 1 is needed, got ${n}`);
    }
    this.#concurrency = n;
    for (const [id, retire] of this.#workers) if (id >= n) retire.abort();
    this.#spawn?.(n);
  }

  /**
   * Queues `requests` (each names its cluster) for `operator`, at `priority` (default `live`; `low` for objects from a
   * list, a relist or a resync: see FairWorkQueue). The queue keeps each request as it is: the same object reaches
   * `reconcile()`.
   */
  enqueue(operator: string, requests: Iterable<Request>, priority: QueuePriority = "live"): void {
    const { queue } = this.#o;
    for (const request of requests) queue.add({ operator, request }, priority);
  }

  get inFlight(): number {
    return this.#inFlight;
  }

  get lastCompletedAt(): number {
    return this.#lastCompletedAt;
  }

  /** Runs the workers until `signal` aborts, then drains in-flight work (bounded) and settles. */
  async start(signal: AbortSignal): Promise<void> {
    // One listener for the whole run, not one per reconcile: on shutdown, whatever still runs when
    // the drain deadline passes is aborted.
    let drain: { cancel(): void } | undefined;
    const onStop = () => {
      drain = this.#clock.setTimer(this.#o.drainTimeoutMs ?? 10_000, () => {
        for (const abort of this.#running) abort.abort(new Error("shutting down"));
      });
    };
    if (signal.aborted) onStop();
    else signal.addEventListener("abort", onStop, { once: true });
    const workers = new Set<Promise<void>>();
    const spawn = (n: number) => {
      for (let id = 0; id < n && !signal.aborted; id++) {
        if (this.#workers.has(id)) continue;
        const retire = new AbortController();
        this.#workers.set(id, retire);
        const w: Promise<void> = this.#worker(id, signal, retire.signal).finally(() => {
          this.#workers.delete(id);
          workers.delete(w);
          // Retired, then wanted again before it noticed: start its successor.
          if (id < this.#concurrency) spawn(this.#concurrency);
        });
        workers.add(w);
      }
    };
    this.#spawn = spawn;
    const retireAll = () => {
      for (const retire of this.#workers.values()) retire.abort();
    };
    signal.addEventListener("abort", retireAll, { once: true });
    try {
      spawn(this.#concurrency);
      while (workers.size > 0) await Promise.all(workers);
    } finally {
      this.#spawn = undefined;
      signal.removeEventListener("abort", retireAll);
      signal.removeEventListener("abort", onStop);
      drain?.cancel();
    }
  }

  /** `retire` aborts on shutdown too (it then only ends the wait for a key; `signal` stops the rest). */
  async #worker(id: number, signal: AbortSignal, retire: AbortSignal): Promise<void> {
    const { queue } = this.#o;
    // Workers numbered at or above the concurrency leave (after the key they hold), so numbers stay below it.
    while (!signal.aborted && !retire.aborted && id < this.#concurrency) {
      const key = await queue.get(retire);
      if (key === undefined) return;
      try {
        if (this.#o.budget && !(await this.#o.budget.wait(signal))) return;
        await this.#process(key, signal);
      } finally {
        queue.done(key);
      }
    }
  }

  async #process(key: QueueKey, stop: AbortSignal): Promise<void> {
    const { queue, logger } = this.#o;
    const { operator, request } = key;
    const { cluster, namespace, name } = request;
    const target = this.#o.target(cluster, operator);
    if (!target) {
      queue.forget(key);
      return;
    }
    const reconcileId = (++this.#seq).toString(36);
    // Built on first use: most reconciles log nothing.
    let log: Logger | undefined;
    const logFor = () => (log ??= logger.child({ cluster, operator, namespace, name, reconcileId }));
    const timeoutMs = this.#o.reconcileTimeoutMs ?? 30_000;
    // On shutdown the reconcile keeps running until the drain deadline, then start() aborts it.
    const abort = new AbortController();
    this.#running.add(abort);
    let timer: { cancel(): void } | undefined;
    const started = this.#clock.now();
    this.#inFlight++;
    try {
      const timeout = new Promise<never>((_, reject) => {
        timer = this.#clock.setTimer(timeoutMs, () => {
          const err = new ReconcileTimeoutError(
            `reconcile of ${cluster}/${operator}/${namespace}/${name} did not finish within ${timeoutMs} ms`,
          );
          // Reject first: a reconcile that returns as soon as it is aborted must still count as timed out.
          reject(err);
          abort.abort(err);
        });
      });
      const signal = abort.signal;
      const result = await Promise.race([
        target.reconciler.reconcile(request, {
          client: target.client.withSignal(signal),
          events: target.events,
          cluster: (other) => target.cluster(other, signal),
          clusters: () => target.clusters?.() ?? [],
          background: target.background,
          signal,
          get logger() {
            return logFor();
          },
          reconcileId,
        }),
        timeout,
      ]);
      queue.forget(key);
      if (result && result.requeueAfterMs >= 0) {
        queue.addAfter(key, result.requeueAfterMs);
        this.#observe(cluster, operator, "requeue_after", started);
      } else this.#observe(cluster, operator, "success", started);
    } catch (err) {
      if (err instanceof TerminalError) {
        queue.forget(key);
        logFor().error("reconcile failed for good", { error: err });
        this.#observe(cluster, operator, "terminal", started);
      } else {
        if (!stop.aborted) queue.addRateLimited(key);
        logFor().warn("reconcile failed, will retry", { error: errorText(err), retries: queue.numRequeues(key) });
        this.#observe(cluster, operator, "error", started);
      }
    } finally {
      this.#inFlight--;
      this.#lastCompletedAt = this.#clock.now();
      timer?.cancel();
      this.#running.delete(abort);
    }
  }

  #observe(cluster: string, operator: string, outcome: ReconcileOutcome, started: number): void {
    this.#o.observer?.reconciled?.(cluster, operator, outcome, (this.#clock.now() - started) / 1000);
  }
}

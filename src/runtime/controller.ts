// The controller loop: workers take fair keys from the shared queue, spend the global budget, and reconcile.

import { type FairWorkQueue, makeKey, splitKey, type TokenBucket } from "../queue/mod.ts";
import { type Clock, errorText, type Logger, SystemClock } from "../util/mod.ts";
import { type ClusterContext, type Reconciler, TerminalError } from "./reconciler.ts";

export type ReconcileOutcome = "success" | "error" | "requeue_after" | "terminal";

/** Hooks for metrics; all optional. */
export interface ControllerObserver {
  reconciled?(cluster: string, outcome: ReconcileOutcome, seconds: number): void;
}

export interface ControllerOptions {
  reconciler: Reconciler;
  queue: FairWorkQueue;
  /** Looks up the engaged cluster a key belongs to; undefined once it is disengaged. */
  cluster(name: string): ClusterContext | undefined;
  /** Reconciles running at once across all clusters. Default 16. */
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
export class ReconcileTimeoutError extends Error {
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

  constructor(options: ControllerOptions) {
    this.#o = options;
    this.#clock = options.clock ?? new SystemClock();
    this.#lastCompletedAt = this.#clock.now();
  }

  /** Queues `namespace/name` keys of one cluster. */
  enqueue(cluster: string, keys: Iterable<string>): void {
    for (const k of keys) {
      const slash = k.indexOf("/");
      this.#o.queue.add(slash < 0 ? makeKey(cluster, "", k) : makeKey(cluster, k.slice(0, slash), k.slice(slash + 1)));
    }
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
    try {
      await Promise.all(Array.from({ length: this.#o.concurrency ?? 16 }, () => this.#worker(signal)));
    } finally {
      signal.removeEventListener("abort", onStop);
      drain?.cancel();
    }
  }

  async #worker(signal: AbortSignal): Promise<void> {
    const { queue } = this.#o;
    while (!signal.aborted) {
      const key = await queue.get(signal);
      if (key === undefined) return;
      try {
        if (this.#o.budget && !(await this.#o.budget.wait(signal))) return;
        await this.#process(key, signal);
      } finally {
        queue.done(key);
      }
    }
  }

  async #process(key: string, stop: AbortSignal): Promise<void> {
    const { queue, logger } = this.#o;
    const { cluster, namespace, name } = splitKey(key);
    const ctx = this.#o.cluster(cluster);
    if (!ctx) {
      queue.forget(key);
      return;
    }
    const reconcileId = (++this.#seq).toString(36);
    // Built on first use: most reconciles log nothing.
    let log: Logger | undefined;
    const logFor = () => (log ??= logger.child({ cluster, namespace, name, reconcileId }));
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
          const err = new ReconcileTimeoutError(`reconcile of ${key} did not finish within ${timeoutMs} ms`);
          // Reject first: a reconcile that returns as soon as it is aborted must still count as timed out.
          reject(err);
          abort.abort(err);
        });
      });
      const result = await Promise.race([
        this.#o.reconciler.reconcile({ cluster, namespace, name }, {
          cluster: ctx,
          signal: abort.signal,
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
        this.#observe(cluster, "requeue_after", started);
      } else this.#observe(cluster, "success", started);
    } catch (err) {
      if (err instanceof TerminalError) {
        queue.forget(key);
        logFor().error("reconcile failed for good", { error: err });
        this.#observe(cluster, "terminal", started);
      } else {
        if (!stop.aborted) queue.addRateLimited(key);
        logFor().warn("reconcile failed, will retry", { error: errorText(err), retries: queue.numRequeues(key) });
        this.#observe(cluster, "error", started);
      }
    } finally {
      this.#inFlight--;
      this.#lastCompletedAt = this.#clock.now();
      timer?.cancel();
      this.#running.delete(abort);
    }
  }

  #observe(cluster: string, outcome: ReconcileOutcome, started: number): void {
    this.#o.observer?.reconciled?.(cluster, outcome, (this.#clock.now() - started) / 1000);
  }
}

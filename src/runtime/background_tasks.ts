// Long-running work attached to objects of one operator in one cluster (what daemons run on), stopped with it.

import { type Clock, errorText, type Logger, SystemClock } from "../util/mod.ts";
import type { ReconcileScope } from "./reconciler.ts";

/**
 * What a background task runs: `scope.signal` aborts when it must stop; settling ends the task.
 *
 * @example
 * ```ts
 * import type { BackgroundRun } from "./background_tasks.ts";
 * const idle: BackgroundRun = (scope) =>
 *   new Promise((resolve) => scope.signal.addEventListener("abort", () => resolve(), { once: true }));
 * console.log(typeof idle); // "function"
 * ```
 */
export type BackgroundRun = (scope: ReconcileScope) => Promise<void>;

/**
 * Background tasks of one operator's objects in one cluster, reached from a reconcile as `scope.background`: a
 * reconcile starts one per object (a daemon), and the runtime stops them all when this replica stops reconciling in
 * the cluster (its disengagement, a shard handoff, a pause, lost leadership, the hub's stop).
 *
 * Guarantees:
 * - at most one task per key runs in this replica (a task stopped but still running past its grace period keeps its
 *   key until it settles);
 * - `start` refuses (returns false) once the tasks were stopped for the cluster, so a reconcile still running when
 *   reconciling stopped starts nothing;
 * - a task's scope is its own: its signal aborts on `stop(key)` or when reconciling in the cluster stops, and its
 *   client's calls are aborted with it (and fail once the cluster is disengaged: its client is closed).
 *
 * @example A reconcile that keeps one task per object (what `defineHandlers` daemons do)
 * ```ts
 * import { defineOperator } from "../sdk/define_operator.ts";
 * export const keeper = defineOperator({
 *   name: "keeper",
 *   resource: { group: "examples.operator-hub.dev", version: "v1", kind: "Probe", plural: "probes" },
 *   async reconcile(request, { client, background }) {
 *     const key = `${request.namespace}/${request.name}`;
 *     if (!client.cached(request)) return await background?.stop(key);
 *     background?.start(key, (task) => task.signal.aborted ? Promise.resolve() : new Promise((r) =>
 *       task.signal.addEventListener("abort", () => r(), { once: true })));
 *   },
 * });
 * ```
 */
export interface BackgroundTasks {
  /** Whether a task runs under `key` now. */
  has(key: string): boolean;
  /** Starts `run` under `key` unless one runs or the tasks were stopped; `graceMs` overrides the default grace. */
  start(key: string, run: BackgroundRun, options?: { graceMs?: number }): boolean;
  /** Aborts the task under `key`; settles once it ended, or its grace period passed (logged), or at once if none. */
  stop(key: string): Promise<void>;
}

/** What a TaskSet needs: a scope per task (bound to its signal), a clock and a logger. */
export interface TaskSetOptions {
  /** The scope a task runs with, its client and connections bound to `signal`. */
  scopeFor(key: string, signal: AbortSignal): ReconcileScope;
  /** How long a stopped task is waited for before it is logged and no longer waited for. Default 5 s. */
  graceMs?: number;
  clock?: Clock;
  logger: Logger;
}

interface Task {
  abort: AbortController;
  done: Promise<void>;
  graceMs: number;
  stopping?: Promise<void>;
}

/** The default grace period of a stopped background task (a daemon's, unless it sets its own). */
export const DEFAULT_GRACE_MS = 5_000;

/** BackgroundTasks of one operator in one cluster; `close` stops them all (and refuses new ones until `open`). */
export class TaskSet implements BackgroundTasks {
  readonly #o: TaskSetOptions;
  readonly #clock: Clock;
  readonly #tasks = new Map<string, Task>();
  #open = true;

  constructor(options: TaskSetOptions) {
    this.#o = options;
    this.#clock = options.clock ?? new SystemClock();
  }

  /** Tasks running (stopped ones still winding down included). */
  get size(): number {
    return this.#tasks.size;
  }

  /** False between `close` and the next `open`. */
  get isOpen(): boolean {
    return this.#open;
  }

  has(key: string): boolean {
    return this.#tasks.has(key);
  }

  start(key: string, run: BackgroundRun, options: { graceMs?: number } = {}): boolean {
    if (!this.#open || this.#tasks.has(key)) return false;
    const abort = new AbortController();
    const task: Task = { abort, graceMs: options.graceMs ?? this.#o.graceMs ?? DEFAULT_GRACE_MS, done: undefined! };
    this.#tasks.set(key, task);
    task.done = (async () => {
      try {
        await run(this.#o.scopeFor(key, abort.signal));
      } catch (err) {
        this.#o.logger.error("background task failed", { task: key, error: errorText(err) });
      } finally {
        this.#tasks.delete(key);
      }
    })();
    return true;
  }

  stop(key: string): Promise<void> {
    const task = this.#tasks.get(key);
    if (!task) return Promise.resolve();
    return task.stopping ??= this.#stop(key, task);
  }

  /** Stops every task (each within its grace period) and refuses new ones until `open`. */
  async close(): Promise<void> {
    this.#open = false;
    await Promise.all([...this.#tasks.keys()].map((key) => this.stop(key)));
  }

  /** Accepts new tasks again (reconciling resumed in the cluster). */
  open(): void {
    this.#open = true;
  }

  async #stop(key: string, task: Task): Promise<void> {
    task.abort.abort(new Error("background task stopped"));
    let timer: { cancel(): void } | undefined;
    const overran = await Promise.race([
      task.done.then(() => false),
      new Promise<boolean>((resolve) => timer = this.#clock.setTimer(task.graceMs, () => resolve(true))),
    ]);
    timer?.cancel();
    if (overran) {
      this.#o.logger.warn("background task did not stop within its grace period; no longer waited for", {
        task: key,
        graceMs: task.graceMs,
      });
    }
  }
}

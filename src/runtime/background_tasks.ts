// Long-running work attached to objects of one operator in one cluster (what daemons run on), stopped with it: TaskSet,
// the runtime's BackgroundTasks (the interface is in reconciler.ts, beside the scope a reconcile reaches it from).

import { type Clock, errorText, type Logger, SystemClock } from "../util/mod.ts";
import type { BackgroundRun, BackgroundTasks, ReconcileScope } from "./reconciler.ts";

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
  /** Made with the first task: most operators run none. */
  #tasks: Map<string, Task> | undefined;
  #open = true;

  constructor(options: TaskSetOptions) {
    this.#o = options;
    this.#clock = options.clock ?? new SystemClock();
  }

  /** Tasks running (stopped ones still winding down included). */
  get size(): number {
    return this.#tasks?.size ?? 0;
  }

  /** False between `close` and the next `open`. */
  get isOpen(): boolean {
    return this.#open;
  }

  has(key: string): boolean {
    return this.#tasks?.has(key) ?? false;
  }

  start(key: string, run: BackgroundRun, options: { graceMs?: number } = {}): boolean {
    if (!this.#open) return false;
    const tasks = this.#tasks ??= new Map();
    if (tasks.has(key)) return false;
    const abort = new AbortController();
    const task: Task = { abort, graceMs: options.graceMs ?? this.#o.graceMs ?? DEFAULT_GRACE_MS, done: undefined! };
    tasks.set(key, task);
    task.done = (async () => {
      try {
        await run(this.#o.scopeFor(key, abort.signal));
      } catch (err) {
        this.#o.logger.error("background task failed", { task: key, error: errorText(err) });
      } finally {
        tasks.delete(key);
      }
    })();
    return true;
  }

  stop(key: string): Promise<void> {
    const task = this.#tasks?.get(key);
    if (!task) return Promise.resolve();
    return task.stopping ??= this.#stop(key, task);
  }

  /** Stops every task (each within its grace period) and refuses new ones until `open`. */
  async close(): Promise<void> {
    this.#open = false;
    await Promise.all([...this.#tasks?.keys() ?? []].map((key) => this.stop(key)));
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

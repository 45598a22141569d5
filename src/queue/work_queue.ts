// The shared work queue: client-go workqueue semantics for `cluster/operator/namespace/name` keys, fair across clusters.

import { type Clock, SystemClock, type Timer } from "../util/clock.ts";
import { Fifo } from "./_fifo.ts";
import { Heap } from "./_heap.ts";
import { clusterOf } from "./key.ts";
import { defaultControllerRateLimiter, type RateLimiter } from "./rate_limiter.ts";

export { makeKey, splitKey } from "./key.ts";

/**
 * Callbacks for metrics, given the key (its parts name the cluster and the operator). They run
 * synchronously inside queue operations, after the queue's state is updated: keep them cheap and
 * never throw from them. Keys dropped by `removeCluster` get no callback: the caller forgets the
 * cluster's series itself.
 */
export interface WorkQueueHooks {
  /** A key became dirty (workqueue_adds_total, workqueue_depth +1). Adds of a key already queued are not counted. */
  added?(key: string): void;
  /** A key was handed to a worker after waiting `waitedMs` since it was added (workqueue_queue_duration_seconds, depth -1). */
  handedOut?(key: string, waitedMs: number): void;
  /** `addRateLimited` was called for a key (workqueue_retries_total). */
  retried?(key: string): void;
}

/** Settings for a FairWorkQueue. */
export interface WorkQueueOptions {
  /** Defaults to the system clock. */
  clock?: Clock;
  /** Used by `addRateLimited`. Defaults to `defaultControllerRateLimiter({ clock })`. */
  rateLimiter?: RateLimiter;
  hooks?: WorkQueueHooks;
}

/** Cheap per-cluster numbers, for health and metrics. */
export interface ClusterQueueStats {
  /** Keys waiting to be handed out. */
  queued: number;
  /** Keys handed out and not yet `done`. */
  processing: number;
  /** Keys waiting for a delayed add. */
  delayed: number;
  /** Keys with rate-limiter state (added rate-limited and not forgotten). */
  retrying: number;
  /** How long the key next in line has waited since it was added; 0 when nothing is queued. */
  oldestWaitingMs: number;
}

interface Delayed {
  key: string;
  at: number;
  seq: number;
}

/** Everything the queue holds for one cluster. Replaced by a fresh object after `removeCluster`. */
interface ClusterState {
  readonly name: string;
  readonly fifo: Fifo<string>;
  /** In the round-robin ring. */
  inRing: boolean;
  /** Hand-outs left in the current turn. */
  credit: number;
  processing: number;
  removed: boolean;
  /** Latest delayed entry per key; older heap entries for the same key are stale. */
  readonly delayed: Map<string, Delayed>;
  readonly heap: Heap<Delayed>;
  timer: Timer | undefined;
  timerAt: number;
  /** Keys with rate-limiter state, so `removeCluster` can forget them. */
  readonly limited: Set<string>;
}

interface Waiter {
  resolve(key: string | undefined): void;
  signal: AbortSignal | undefined;
  onAbort: (() => void) | undefined;
}

/**
 * A work queue with client-go semantics and fairness across clusters.
 *
 * Guarantees:
 * - A key is never handed out twice at once: from `get` until `done` it is processing, and adds of it
 *   only mark it dirty; it is queued again once `done` is called.
 * - Adding a key that is already queued does nothing, so a burst of events for one object costs one
 *   reconcile.
 * - Within a cluster, keys are handed out in the order they were queued.
 * - Across clusters, turns are round-robin, one key per cluster per turn.
 *   A cluster that becomes non-empty joins the end of the round, so its key is
 *   handed out within as many `get`s as there are clusters with queued keys, however many keys the
 *   others have.
 * - `get` waiters are served first come, first served.
 * - Delayed adds use one clock timer per cluster (armed for that cluster's earliest due key), so
 *   30,000 delayed keys cost one timer, and `removeCluster` / `shutDown` leave no timer behind.
 * - `add` and `get` are O(1) amortised, `addAfter` is O(log n).
 *
 * Assumptions:
 * - Every key starts with `cluster/` (queue keys are `cluster/operator/namespace/name`); `add` throws InvalidKeyError otherwise.
 * - Whoever receives a key from `get` calls `done(key)` exactly once, even when processing fails;
 *   otherwise the key is never handed out again.
 * - After `shutDown()` nothing is handed out any more: `get` resolves `undefined` and adds are
 *   ignored. Keys still queued are not drained (unlike client-go's Get, which drains first).
 */
export class FairWorkQueue {
  readonly #clock: Clock;
  readonly #limiter: RateLimiter;
  readonly #hooks: WorkQueueHooks;
  readonly #clusters = new Map<string, ClusterState>();
  /** Clusters with queued keys, in turn order; the head is the cluster being served. */
  readonly #ring = new Fifo<ClusterState>();
  /** Queued keys, and processing keys added again, with the time they were added. */
  readonly #dirty = new Map<string, number>();
  /** Keys handed out and not yet done, with the cluster state that counted them. */
  readonly #processing = new Map<string, ClusterState>();
  /** Insertion-ordered, so the first entry is the longest waiting `get`. */
  readonly #waiters = new Set<Waiter>();
  #queued = 0;
  #seq = 0;
  #shuttingDown = false;

  constructor(options: WorkQueueOptions = {}) {
    this.#clock = options.clock ?? new SystemClock();
    this.#limiter = options.rateLimiter ?? defaultControllerRateLimiter({ clock: this.#clock });
    this.#hooks = options.hooks ?? {};
  }

  /** Marks `key` as needing work. Does nothing if it is already queued or after `shutDown()`. */
  add(key: string): void {
    const cluster = clusterOf(key);
    if (this.#shuttingDown || this.#dirty.has(key)) return;
    this.#dirty.set(key, this.#clock.now());
    this.#hooks.added?.(key);
    if (this.#processing.has(key)) return; // queued again by done()
    this.#push(this.#state(cluster), key);
  }

  /**
   * Hands out the next key, waiting until there is one. Resolves `undefined` once the queue shuts
   * down or `signal` aborts. The caller owns a key it receives and must call `done(key)`.
   */
  get(signal?: AbortSignal): Promise<string | undefined> {
    if (this.#shuttingDown || signal?.aborted) return Promise.resolve(undefined);
    if (this.#waiters.size === 0 && this.#queued > 0) return Promise.resolve(this.#next());
    return new Promise((resolve) => {
      const waiter: Waiter = { resolve, signal, onAbort: undefined };
      if (signal) {
        waiter.onAbort = () => {
          this.#waiters.delete(waiter);
          resolve(undefined);
        };
        signal.addEventListener("abort", waiter.onAbort, { once: true });
      }
      this.#waiters.add(waiter);
    });
  }

  /** Hands out the next key if one is queued and nobody is waiting in `get`, without waiting. */
  tryGet(): string | undefined {
    if (this.#shuttingDown || this.#waiters.size > 0 || this.#queued === 0) return undefined;
    return this.#next();
  }

  /** Ends processing of `key`. If it was added meanwhile, it is queued again. */
  done(key: string): void {
    const counted = this.#processing.get(key);
    if (!counted) return;
    this.#processing.delete(key);
    counted.processing--;
    if (this.#shuttingDown || !this.#dirty.has(key)) return;
    this.#push(this.#state(clusterOf(key)), key);
  }

  /**
   * Adds `key` after `ms` milliseconds. When the key is already waiting for a delayed add, the
   * earlier due time wins. `ms <= 0` adds at once. Ignored after `shutDown()`.
   */
  addAfter(key: string, ms: number): void {
    const cluster = clusterOf(key);
    if (!Number.isFinite(ms)) {
      throw new RangeError(`cannot add ${JSON.stringify(key)} after a delay: delay must be finite, got ${ms} ms`);
    }
    if (this.#shuttingDown) return;
    if (ms <= 0) return this.add(key);
    const c = this.#state(cluster);
    const at = this.#clock.now() + ms;
    const existing = c.delayed.get(key);
    if (existing && existing.at <= at) return;
    const entry: Delayed = { key, at, seq: this.#seq++ };
    c.delayed.set(key, entry);
    c.heap.push(entry);
    if (c.heap.length > 2 * c.delayed.size + 64) c.heap.rebuild([...c.delayed.values()]);
    this.#arm(c);
  }

  /** Adds `key` after the delay the rate limiter gives it, counting one more retry. */
  addRateLimited(key: string): void {
    const cluster = clusterOf(key);
    if (this.#shuttingDown) return;
    this.#state(cluster).limited.add(key);
    this.#hooks.retried?.(key);
    this.addAfter(key, this.#limiter.when(key));
  }

  /** Clears the rate limiter's memory of `key`; call it when processing succeeded. */
  forget(key: string): void {
    this.#limiter.forget(key);
    this.#clusters.get(clusterOf(key))?.limited.delete(key);
  }

  /** How many rate-limited retries `key` had since it was last forgotten. */
  numRequeues(key: string): number {
    return this.#limiter.retries(key);
  }

  /** Number of keys queued (not processing, not delayed) across all clusters. */
  len(): number {
    return this.#queued;
  }

  /** Number of keys queued for `cluster`. */
  lenFor(cluster: string): number {
    return this.#clusters.get(cluster)?.fifo.length ?? 0;
  }

  /** How long the key next in line for `cluster` has waited; 0 when none is queued. */
  oldestWaitingMs(cluster: string): number {
    const head = this.#clusters.get(cluster)?.fifo.peek();
    const at = head === undefined ? undefined : this.#dirty.get(head);
    return at === undefined ? 0 : Math.max(0, this.#clock.now() - at);
  }

  /** Queue numbers for one cluster; all zero for an unknown cluster. */
  stats(cluster: string): ClusterQueueStats {
    const c = this.#clusters.get(cluster);
    return {
      queued: c?.fifo.length ?? 0,
      processing: c?.processing ?? 0,
      delayed: c?.delayed.size ?? 0,
      retrying: c?.limited.size ?? 0,
      oldestWaitingMs: this.oldestWaitingMs(cluster),
    };
  }

  /**
   * Forgets `cluster`: drops its queued keys, its delayed adds (cancelling its timer) and its
   * rate-limiter state. Keys of it still processing are not queued again on `done`.
   *
   * Guarantees: afterwards the queue holds no timer, key or limiter entry for `cluster`, except
   * for keys added again later (a re-engaged cluster starts afresh).
   */
  removeCluster(cluster: string): void {
    const c = this.#clusters.get(cluster);
    if (!c) return;
    c.removed = true;
    this.#clusters.delete(cluster);
    c.timer?.cancel();
    c.timer = undefined;
    c.delayed.clear();
    c.heap.rebuild([]);
    for (const key of c.fifo) this.#dirty.delete(key);
    this.#queued -= c.fifo.length;
    c.fifo.clear();
    for (const key of this.#processing.keys()) {
      if (clusterOf(key) === cluster) this.#dirty.delete(key);
    }
    for (const key of c.limited) this.#limiter.forget(key);
    c.limited.clear();
    this.#limiter.forgetCluster?.(cluster);
    // The ring drops the stale state lazily, in #next.
  }

  /** Stops the queue: cancels every timer and resolves every waiting `get` with `undefined`. Idempotent. */
  shutDown(): void {
    if (this.#shuttingDown) return;
    this.#shuttingDown = true;
    for (const c of this.#clusters.values()) {
      c.timer?.cancel();
      c.timer = undefined;
      c.delayed.clear();
      c.heap.rebuild([]);
    }
    const waiters = [...this.#waiters];
    this.#waiters.clear();
    for (const w of waiters) this.#settle(w, undefined);
  }

  #state(cluster: string): ClusterState {
    let c = this.#clusters.get(cluster);
    if (!c) {
      c = {
        name: cluster,
        fifo: new Fifo(),
        inRing: false,
        credit: 0,
        processing: 0,
        removed: false,
        delayed: new Map(),
        heap: new Heap((a, b) => a.at < b.at || (a.at === b.at && a.seq < b.seq)),
        timer: undefined,
        timerAt: Infinity,
        limited: new Set(),
      };
      this.#clusters.set(cluster, c);
    }
    return c;
  }

  #push(c: ClusterState, key: string): void {
    c.fifo.push(key);
    this.#queued++;
    if (!c.inRing) {
      c.inRing = true;
      c.credit = 1;
      this.#ring.push(c);
    }
    while (this.#waiters.size > 0 && this.#queued > 0) {
      const waiter = this.#waiters.values().next().value as Waiter;
      this.#waiters.delete(waiter);
      this.#settle(waiter, this.#next());
    }
  }

  /** Takes the next key in turn order and marks it processing. Only call when `#queued > 0`. */
  #next(): string {
    for (;;) {
      const c = this.#ring.peek() as ClusterState;
      if (c.removed || c.fifo.length === 0) {
        this.#ring.shift();
        c.inRing = false;
        continue;
      }
      const key = c.fifo.shift() as string;
      this.#queued--;
      if (c.fifo.length === 0) {
        this.#ring.shift();
        c.inRing = false;
      } else if (--c.credit <= 0) {
        this.#ring.shift();
        c.credit = 1;
        this.#ring.push(c);
      }
      const addedAt = this.#dirty.get(key) as number;
      this.#dirty.delete(key);
      this.#processing.set(key, c);
      c.processing++;
      this.#hooks.handedOut?.(key, this.#clock.now() - addedAt);
      return key;
    }
  }

  #settle(waiter: Waiter, key: string | undefined): void {
    if (waiter.onAbort) waiter.signal?.removeEventListener("abort", waiter.onAbort);
    waiter.resolve(key);
  }

  /** Makes sure the cluster's timer fires by its earliest valid due time, and only when there is one. */
  #arm(c: ClusterState): void {
    let top = c.heap.peek();
    while (top && c.delayed.get(top.key) !== top) {
      c.heap.pop();
      top = c.heap.peek();
    }
    if (!top) {
      c.timer?.cancel();
      c.timer = undefined;
      c.timerAt = Infinity;
      return;
    }
    if (c.timer && c.timerAt <= top.at) return;
    c.timer?.cancel();
    c.timerAt = top.at;
    c.timer = this.#clock.setTimer(top.at - this.#clock.now(), () => this.#fire(c));
  }

  #fire(c: ClusterState): void {
    c.timer = undefined;
    c.timerAt = Infinity;
    if (c.removed || this.#shuttingDown) return;
    const now = this.#clock.now();
    for (let top = c.heap.peek(); top && top.at <= now; top = c.heap.peek()) {
      c.heap.pop();
      if (c.delayed.get(top.key) !== top) continue;
      c.delayed.delete(top.key);
      this.add(top.key);
    }
    this.#arm(c);
  }
}

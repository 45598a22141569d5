// The shared work queue: client-go workqueue semantics for typed keys (cluster, operator, request), fair across clusters.

import { type Clock, SystemClock } from "../util/clock.ts";
import { Fifo } from "./_fifo.ts";
import { DelayedAdds } from "./_delayed_adds.ts";
import { type Entry, Lane, type QueuePriority } from "./_lane.ts";
import { keyId, type QueueKey } from "./key.ts";
import { defaultControllerRateLimiter, type RateLimiter } from "./rate_limiter.ts";

export type { QueueKey, Request } from "./key.ts";
export type { QueuePriority } from "./_lane.ts";

/**
 * Callbacks for metrics, given the key (it names the cluster and the operator). They run
 * synchronously inside queue operations, after the queue's state is updated: keep them cheap and
 * never throw from them. Keys dropped by `removeCluster` get no callback: the caller forgets the
 * cluster's series itself.
 */
export interface WorkQueueHooks {
  /** A key became dirty (workqueue_adds_total, workqueue_depth +1). Adds of a key already queued are not counted. */
  added?(key: QueueKey): void;
  /** A key was handed to a worker after waiting `waitedMs` since it was added (workqueue_queue_duration_seconds, depth -1). */
  handedOut?(key: QueueKey, waitedMs: number): void;
  /** `addRateLimited` was called for a key (workqueue_retries_total). */
  retried?(key: QueueKey): void;
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
  /** Keys waiting to be handed out, in both lanes. */
  queued: number;
  /** Of those, the keys waiting in the low-priority lane (from a list, a relist or a resync). */
  queuedLow: number;
  /** Keys handed out and not yet `done`. */
  processing: number;
  /** Keys waiting for a delayed add. */
  delayed: number;
  /** Keys with rate-limiter state (added rate-limited and not forgotten). */
  retrying: number;
  /** How long the longest-waiting queued key has waited since it was added; 0 when nothing is queued. */
  oldestWaitingMs: number;
}

/** Everything the queue holds for one cluster. Replaced by a fresh object after `removeCluster`. */
interface ClusterState {
  readonly name: string;
  readonly live: Lane<Queued>;
  readonly low: Lane<Queued>;
  processing: number;
  removed: boolean;
  readonly delayed: DelayedAdds<QueueKey>;
  /** Keys with rate-limiter state by id, so `removeCluster` can forget them. */
  readonly limited: Map<string, QueueKey>;
}

/** A lane entry (by the key's private id, see keyId) with the typed key handed out for it. */
interface Queued extends Entry {
  readonly item: QueueKey;
}

interface Waiter {
  resolve(key: QueueKey | undefined): void;
  signal: AbortSignal | undefined;
  onAbort: (() => void) | undefined;
}

/** A key handed out and not yet done: its entry, and the cluster state that counted it. */
interface Processing {
  readonly entry: Queued;
  readonly cluster: ClusterState;
}

/**
 * A work queue with client-go semantics, two priority lanes, and fairness across clusters.
 *
 * Guarantees:
 * - A key is never handed out twice at once: from `get` until `done` it is processing, and adds of it
 *   only mark it dirty; it is queued again once `done` is called.
 * - Adding a key that is already queued does nothing, so a burst of events for one object costs one
 *   reconcile; except that a `live` add of a key waiting at `low` priority promotes it (the higher priority wins,
 *   as in controller-runtime's priority queue), keeping the time it was first added.
 * - Live keys first: a `low` key (from an initial list, a relist or a resync) is handed out only while no cluster
 *   has a `live` key queued, so 10,000 relisted objects never delay a live change in any cluster.
 * - Within a cluster and a lane, keys are handed out in the order they were queued.
 * - Across clusters, turns are round-robin in each lane, one key per cluster per turn.
 *   A cluster that becomes non-empty in a lane joins the end of that lane's round, so its key is
 *   handed out within as many `get`s as there are clusters with keys queued in that lane (and, for a low key,
 *   once no live key is queued), however many keys the others have.
 * - A delayed or rate-limited add keeps the priority the key was handed out with when it is called while the key
 *   is processing (a retry of a relisted object stays behind live changes), unless a priority is given.
 * - `get` waiters are served first come, first served.
 * - Delayed adds use one clock timer per cluster (armed for that cluster's earliest due key), so
 *   30,000 delayed keys cost one timer, and `removeCluster` / `shutDown` leave no timer behind.
 * - `add` and `get` are O(1) amortised, `addAfter` is O(log n).
 *
 * Assumptions:
 * - Keys are compared by value: a key equal in its four parts to one queued is that key. A key with an empty cluster,
 *   operator or name, or an operator, namespace or name holding "/", is refused with InvalidKeyError (see keyId).
 * - Whoever receives a key from `get` calls `done(key)` (with it or an equal key) exactly once, even when processing fails;
 *   otherwise the key is never handed out again.
 * - Live keys arrive slower than workers take them: a cluster whose live changes alone exceed the hub's capacity
 *   keeps low keys waiting (they are never lost, and are handed out once the live lane empties).
 * - After `shutDown()` nothing is handed out any more: `get` resolves `undefined` and adds are
 *   ignored. Keys still queued are not drained (unlike client-go's Get, which drains first).
 */
export class FairWorkQueue {
  readonly #clock: Clock;
  readonly #limiter: RateLimiter;
  readonly #hooks: WorkQueueHooks;
  readonly #clusters = new Map<string, ClusterState>();
  /** Clusters with live keys queued, in turn order; the head is the cluster being served. */
  readonly #liveRing = new Fifo<ClusterState>();
  /** Clusters with low keys queued, in turn order. */
  readonly #lowRing = new Fifo<ClusterState>();
  /** Queued keys, and processing keys added again, with when they were added and their priority. */
  readonly #dirty = new Map<string, Queued>();
  /** Keys handed out and not yet done. */
  readonly #processing = new Map<string, Processing>();
  /** Insertion-ordered, so the first entry is the longest waiting `get`. */
  readonly #waiters = new Set<Waiter>();
  #queued = 0;
  #queuedLive = 0;
  #shuttingDown = false;

  constructor(options: WorkQueueOptions = {}) {
    this.#clock = options.clock ?? new SystemClock();
    this.#limiter = options.rateLimiter ?? defaultControllerRateLimiter({ clock: this.#clock });
    this.#hooks = options.hooks ?? {};
  }

  /**
   * Marks `key` as needing work, at `priority` (default `live`). Does nothing if it is already queued at that
   * priority or higher, or after `shutDown()`; a `live` add of a key queued `low` promotes it.
   */
  add(key: QueueKey, priority: QueuePriority = "live"): void {
    const id = keyId(key);
    if (this.#shuttingDown) return;
    const queued = this.#dirty.get(id);
    if (queued) {
      if (priority === "live" && queued.priority === "low") this.#promote(queued);
      return;
    }
    const entry: Queued = { key: id, item: key, at: this.#clock.now(), priority };
    this.#dirty.set(id, entry);
    this.#hooks.added?.(key);
    if (this.#processing.has(id)) return; // queued again by done()
    this.#push(this.#state(key.request.cluster), entry);
  }

  /**
   * Hands out the next key, waiting until there is one. Resolves `undefined` once the queue shuts
   * down or `signal` aborts. The caller owns a key it receives and must call `done(key)`.
   */
  get(signal?: AbortSignal): Promise<QueueKey | undefined> {
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
  tryGet(): QueueKey | undefined {
    if (this.#shuttingDown || this.#waiters.size > 0 || this.#queued === 0) return undefined;
    return this.#next();
  }

  /** The priority `key` was handed out with while it is processing; undefined when it is not processing. */
  priorityOf(key: QueueKey): QueuePriority | undefined {
    return this.#processing.get(keyId(key))?.entry.priority;
  }

  /** Ends processing of `key`. If it was added meanwhile, it is queued again (at the priority it was added with). */
  done(key: QueueKey): void {
    const id = keyId(key);
    const counted = this.#processing.get(id);
    if (!counted) return;
    this.#processing.delete(id);
    counted.cluster.processing--;
    const again = this.#dirty.get(id);
    if (this.#shuttingDown || !again) return;
    this.#push(this.#state(key.request.cluster), again);
  }

  /**
   * Adds `key` after `ms` milliseconds, at `priority` (default: the priority it was handed out with while it is
   * processing, else `live`). When the key is already waiting for a delayed add, the earlier due time and the
   * higher priority win. `ms <= 0` adds at once. Ignored after `shutDown()`.
   */
  addAfter(key: QueueKey, ms: number, priority?: QueuePriority): void {
    const id = keyId(key);
    if (!Number.isFinite(ms)) {
      throw new RangeError(`cannot add ${JSON.stringify(id)} after a delay: delay must be finite, got ${ms} ms`);
    }
    if (this.#shuttingDown) return;
    const p = priority ?? this.#processing.get(id)?.entry.priority ?? "live";
    if (ms <= 0) return this.add(key, p);
    this.#state(key.request.cluster).delayed.schedule(id, key, ms, p);
  }

  /**
   * Adds `key` after the delay the rate limiter gives it, counting one more retry; at `priority` (default: the
   * priority it was handed out with while it is processing, else `live`).
   */
  addRateLimited(key: QueueKey, priority?: QueuePriority): void {
    const id = keyId(key);
    if (this.#shuttingDown) return;
    this.#state(key.request.cluster).limited.set(id, key);
    this.#hooks.retried?.(key);
    this.addAfter(key, this.#limiter.when(key), priority);
  }

  /** Clears the rate limiter's memory of `key`; call it when processing succeeded. */
  forget(key: QueueKey): void {
    this.#limiter.forget(key);
    this.#clusters.get(key.request.cluster)?.limited.delete(keyId(key));
  }

  /** How many rate-limited retries `key` had since it was last forgotten. */
  numRequeues(key: QueueKey): number {
    return this.#limiter.retries(key);
  }

  /** Number of keys queued (not processing, not delayed) across all clusters, in both lanes. */
  len(): number {
    return this.#queued;
  }

  /** Number of keys queued for `cluster`, in both lanes. */
  lenFor(cluster: string): number {
    const c = this.#clusters.get(cluster);
    return c ? c.live.length + c.low.length : 0;
  }

  /** How long the longest-waiting queued key of `cluster` (the head of either lane) has waited; 0 when none is queued. */
  oldestWaitingMs(cluster: string): number {
    const c = this.#clusters.get(cluster);
    if (!c) return 0;
    const at = Math.min(c.live.peek()?.at ?? Infinity, c.low.peek()?.at ?? Infinity);
    return at === Infinity ? 0 : Math.max(0, this.#clock.now() - at);
  }

  /** Queue numbers for one cluster; all zero for an unknown cluster. */
  stats(cluster: string): ClusterQueueStats {
    const c = this.#clusters.get(cluster);
    return {
      queued: this.lenFor(cluster),
      queuedLow: c?.low.length ?? 0,
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
    c.delayed.clear();
    for (const lane of [c.live, c.low]) {
      for (const e of lane) this.#dirty.delete(e.key);
      this.#queued -= lane.length;
    }
    this.#queuedLive -= c.live.length;
    c.live.clear();
    c.low.clear();
    for (const [id, p] of this.#processing) {
      if (p.entry.item.request.cluster === cluster) this.#dirty.delete(id);
    }
    for (const key of c.limited.values()) this.#limiter.forget(key);
    c.limited.clear();
    this.#limiter.forgetCluster?.(cluster);
    // The rings drop the stale state lazily, in #next.
  }

  /** Stops the queue: cancels every timer and resolves every waiting `get` with `undefined`. Idempotent. */
  shutDown(): void {
    if (this.#shuttingDown) return;
    this.#shuttingDown = true;
    for (const c of this.#clusters.values()) c.delayed.clear();
    const waiters = [...this.#waiters];
    this.#waiters.clear();
    for (const w of waiters) this.#settle(w, undefined);
  }

  #state(cluster: string): ClusterState {
    let c = this.#clusters.get(cluster);
    if (!c) {
      c = {
        name: cluster,
        live: new Lane<Queued>("live"),
        low: new Lane<Queued>("low"),
        processing: 0,
        removed: false,
        delayed: new DelayedAdds(this.#clock, (key, priority) => this.add(key, priority)),
        limited: new Map(),
      };
      this.#clusters.set(cluster, c);
    }
    return c;
  }

  /** Moves a queued low key to the live lane (or, while it is processing, makes done() queue it live). */
  #promote(entry: Queued): void {
    entry.priority = "live";
    if (this.#processing.has(entry.key)) return;
    const c = this.#state(entry.item.request.cluster);
    c.low.left();
    this.#queued--;
    this.#push(c, entry);
  }

  #push(c: ClusterState, entry: Queued): void {
    const lane = entry.priority === "live" ? c.live : c.low;
    lane.push(entry);
    this.#queued++;
    if (lane === c.live) this.#queuedLive++;
    if (!lane.inRing) {
      lane.inRing = true;
      (lane === c.live ? this.#liveRing : this.#lowRing).push(c);
    }
    while (this.#waiters.size > 0 && this.#queued > 0) {
      const waiter = this.#waiters.values().next().value as Waiter;
      this.#waiters.delete(waiter);
      this.#settle(waiter, this.#next());
    }
  }

  /** Takes the next key in turn order (live lane first) and marks it processing. Only call when `#queued > 0`. */
  #next(): QueueKey {
    const live = this.#queuedLive > 0;
    const ring = live ? this.#liveRing : this.#lowRing;
    for (;;) {
      const c = ring.peek() as ClusterState;
      const lane = live ? c.live : c.low;
      if (c.removed || lane.length === 0) {
        ring.shift();
        lane.inRing = false;
        continue;
      }
      const entry = lane.shift() as Queued;
      this.#queued--;
      if (live) this.#queuedLive--;
      ring.shift();
      if (lane.length === 0) lane.inRing = false;
      else ring.push(c);
      this.#dirty.delete(entry.key);
      this.#processing.set(entry.key, { entry, cluster: c });
      c.processing++;
      this.#hooks.handedOut?.(entry.item, this.#clock.now() - entry.at);
      return entry.item;
    }
  }

  #settle(waiter: Waiter, key: QueueKey | undefined): void {
    if (waiter.onAbort) waiter.signal?.removeEventListener("abort", waiter.onAbort);
    waiter.resolve(key);
  }
}

// Rate limiters for retries and API calls: per-item exponential backoff, token buckets, and combinations.

import { type Clock, SystemClock } from "../util/clock.ts";
import { keyId, type QueueKey } from "./key.ts";

/** Decides how long a key waits before it is retried. Same contract as client-go's `RateLimiter`. */
export interface RateLimiter {
  /** Records one more failure of `key` and returns how many milliseconds it should wait. */
  when(key: QueueKey): number;
  /** Drops everything known about `key`, typically after it succeeded. */
  forget(key: QueueKey): void;
  /** How many times `when(key)` was called since the last `forget(key)`, for a key equal to `key`. */
  retries(key: QueueKey): number;
  /** Optional: drops every state that belongs to `cluster`, for when the cluster is disengaged. */
  forgetCluster?(cluster: string): void;
}

/** Settings for an ItemExponentialLimiter. */
export interface ItemExponentialOptions {
  /** Delay after the first failure. Default 5 ms (client-go). */
  baseMs?: number;
  /** Largest delay. Default 1,000,000 ms, client-go's 1000 s; the hub passes 5 minutes. */
  maxMs?: number;
}

/**
 * Per-key exponential backoff: `baseMs * 2^failures`, capped at `maxMs`.
 *
 * Guarantees: the delay for a key never decreases until `forget(key)`, never exceeds `maxMs`, and is
 * always a finite number, however many failures are recorded.
 * Assumptions: callers `forget` keys that succeed or go away; otherwise the per-key count stays in memory.
 */
export class ItemExponentialLimiter implements RateLimiter {
  readonly #base: number;
  readonly #max: number;
  readonly #failures = new Map<string, number>();

  constructor(options: ItemExponentialOptions = {}) {
    this.#base = options.baseMs ?? 5;
    this.#max = options.maxMs ?? 1_000_000;
    if (!(this.#base > 0) || !Number.isFinite(this.#base)) {
      throw new RangeError(`cannot create ItemExponentialLimiter: baseMs must be a positive number, got ${this.#base}`);
    }
    if (!(this.#max >= this.#base) || !Number.isFinite(this.#max)) {
      throw new RangeError(
        `cannot create ItemExponentialLimiter: maxMs must be finite and at least baseMs (${this.#base}), got ${this.#max}`,
      );
    }
  }

  when(key: QueueKey): number {
    const id = keyId(key);
    const failures = this.#failures.get(id) ?? 0;
    this.#failures.set(id, failures + 1);
    // 2^1024 is Infinity; stop the exponent well before that.
    return Math.min(this.#max, this.#base * 2 ** Math.min(failures, 1000));
  }

  forget(key: QueueKey): void {
    this.#failures.delete(keyId(key));
  }

  retries(key: QueueKey): number {
    return this.#failures.get(keyId(key)) ?? 0;
  }

  /** Number of keys with recorded failures. */
  get size(): number {
    return this.#failures.size;
  }
}

/** Settings for a TokenBucket. */
export interface TokenBucketOptions {
  /** Defaults to the system clock. */
  clock?: Clock;
}

/**
 * A token bucket refilled at `qps` tokens per second, holding at most `burst`, starting full.
 * Like golang.org/x/time/rate, `take()` reserves a token even when none is available yet and
 * says how long to wait for it, so callers queue up in order instead of polling.
 *
 * Guarantees:
 * - Over any window of `t` ms, at most `burst + t * qps / 1000` tokens are handed out.
 * - Reservations are served in the order they were made: a later `take()` never waits less than
 *   an earlier one.
 * - `wait()` never rejects; an aborted wait returns its token to the bucket.
 * Assumptions: the clock never goes backwards by much; a backwards jump only delays tokens.
 */
export class TokenBucket {
  #qps: number;
  #burst: number;
  readonly #clock: Clock;
  /** Milliseconds between tokens. */
  #interval: number;
  /**
   * The time at which the bucket would be full again if nothing else were taken (the "theoretical
   * arrival time" of GCRA). A take at `now` is allowed once `now >= tat + interval - burst * interval`.
   */
  #tat = -Infinity;

  constructor(qps: number, burst: number, options: TokenBucketOptions = {}) {
    checkRate(qps, burst, "create TokenBucket");
    this.#qps = qps;
    this.#burst = burst;
    this.#clock = options.clock ?? new SystemClock();
    this.#interval = qps === Infinity ? 0 : 1000 / qps;
  }

  /** Tokens per second. */
  get qps(): number {
    return this.#qps;
  }

  /** Tokens the bucket holds when full. */
  get burst(): number {
    return this.#burst;
  }

  /**
   * Changes the rate and the burst (the hub scales its reconcile budget with the clusters engaged). Tokens already
   * taken keep their count and come back at the new rate; a larger burst is available at once.
   */
  setRate(qps: number, burst: number): void {
    checkRate(qps, burst, "change TokenBucket's rate");
    const now = this.#clock.now();
    const taken = this.#interval === 0 || this.#tat === -Infinity ? 0 : Math.max(0, this.#tat - now) / this.#interval;
    this.#qps = qps;
    this.#burst = burst;
    this.#interval = qps === Infinity ? 0 : 1000 / qps;
    this.#tat = taken > 0 ? now + taken * this.#interval : -Infinity;
  }

  /** Reserves one token and returns how many milliseconds to wait before using it (0 when available now). */
  take(): number {
    if (this.#interval === 0) return 0;
    const now = this.#clock.now();
    const tat = Math.max(this.#tat, now) + this.#interval;
    this.#tat = tat;
    return Math.max(0, tat - this.burst * this.#interval - now);
  }

  /** Takes a token only if one is available now. */
  tryTake(): boolean {
    if (this.#interval === 0) return true;
    const now = this.#clock.now();
    const tat = Math.max(this.#tat, now) + this.#interval;
    if (tat - this.burst * this.#interval > now) return false;
    this.#tat = tat;
    return true;
  }

  /**
   * Waits on the clock until a token is available and takes it. Returns true when the caller holds a
   * token, false when `signal` aborted first (the reserved token is then given back).
   */
  async wait(signal?: AbortSignal): Promise<boolean> {
    if (signal?.aborted) return false;
    const delay = this.take();
    if (delay > 0) await this.#clock.sleep(delay, signal);
    if (signal?.aborted) {
      this.#tat -= this.#interval;
      return false;
    }
    return true;
  }

  /** Tokens available now, possibly fractional; negative when callers are already queued for tokens. */
  available(): number {
    if (this.#interval === 0) return Infinity;
    const now = this.#clock.now();
    return this.burst - Math.max(0, this.#tat - now) / this.#interval;
  }
}

function checkRate(qps: number, burst: number, what: string): void {
  if (!(qps > 0)) throw new RangeError(`cannot ${what}: qps must be positive, got ${qps}`);
  if (!(burst >= 1) || !Number.isInteger(burst)) {
    throw new RangeError(`cannot ${what}: burst must be an integer of at least 1, got ${burst}`);
  }
}

/**
 * A RateLimiter that spaces every `when` by a shared token bucket, like client-go's BucketRateLimiter.
 * It keeps no per-key state: `retries` is always 0 and `forget` does nothing.
 */
export class BucketLimiter implements RateLimiter {
  readonly bucket: TokenBucket;

  constructor(bucket: TokenBucket) {
    this.bucket = bucket;
  }

  when(_key: QueueKey): number {
    return this.bucket.take();
  }
  forget(_key: QueueKey): void {}
  retries(_key: QueueKey): number {
    return 0;
  }
}

/**
 * The largest delay of several limiters, like client-go's MaxOfRateLimiter. Every limiter sees every
 * `when`, so each keeps its own count.
 */
export class MaxOfLimiter implements RateLimiter {
  readonly #limiters: RateLimiter[];

  constructor(...limiters: RateLimiter[]) {
    if (limiters.length === 0) throw new RangeError("cannot create MaxOfLimiter: it needs at least one limiter, got 0");
    this.#limiters = limiters;
  }

  when(key: QueueKey): number {
    let delay = 0;
    for (const l of this.#limiters) delay = Math.max(delay, l.when(key));
    return delay;
  }
  forget(key: QueueKey): void {
    for (const l of this.#limiters) l.forget(key);
  }
  retries(key: QueueKey): number {
    let n = 0;
    for (const l of this.#limiters) n = Math.max(n, l.retries(key));
    return n;
  }
  forgetCluster(cluster: string): void {
    for (const l of this.#limiters) l.forgetCluster?.(cluster);
  }
}

/**
 * One limiter per cluster, made on first use, chosen by the key's cluster.
 *
 * Guarantees: a retry storm in one cluster never delays the retries of another, because they
 * never share a bucket. `forgetCluster` drops the cluster's limiter entirely.
 */
export class PerClusterLimiter implements RateLimiter {
  readonly #make: (cluster: string) => RateLimiter;
  readonly #byCluster = new Map<string, RateLimiter>();

  constructor(make: (cluster: string) => RateLimiter) {
    this.#make = make;
  }

  when(key: QueueKey): number {
    const cluster = key.request.cluster;
    let limiter = this.#byCluster.get(cluster);
    if (!limiter) {
      limiter = this.#make(cluster);
      this.#byCluster.set(cluster, limiter);
    }
    return limiter.when(key);
  }
  forget(key: QueueKey): void {
    this.#byCluster.get(key.request.cluster)?.forget(key);
  }
  retries(key: QueueKey): number {
    return this.#byCluster.get(key.request.cluster)?.retries(key) ?? 0;
  }
  forgetCluster(cluster: string): void {
    this.#byCluster.get(cluster)?.forgetCluster?.(cluster);
    this.#byCluster.delete(cluster);
  }
  /** Clusters that currently have a limiter. */
  clusters(): string[] {
    return [...this.#byCluster.keys()];
  }
}

/** Settings for `defaultControllerRateLimiter`. */
export interface ControllerRateLimiterOptions {
  clock?: Clock;
  /** Per-item backoff start. Default 5 ms. */
  baseMs?: number;
  /** Per-item backoff cap. Default 5 minutes (the hub's choice; client-go uses 1000 s). */
  maxMs?: number;
  /** Retries per second of the bucket. Default 10. */
  qps?: number;
  /** Bucket size. Default 100. */
  burst?: number;
  /**
   * "cluster" (default) gives each cluster its own bucket, so one failing cluster cannot use up the
   * retry budget of the others; "global" shares one bucket across clusters, exactly like client-go.
   */
  bucketScope?: "cluster" | "global";
}

/**
 * client-go's DefaultControllerRateLimiter: the larger of a per-item exponential backoff and a
 * 10 qps / burst 100 token bucket. Differences, both options: the backoff cap defaults to 5 minutes,
 * and the bucket is per cluster unless `bucketScope: "global"`.
 */
export function defaultControllerRateLimiter(options: ControllerRateLimiterOptions = {}): RateLimiter {
  const clock = options.clock ?? new SystemClock();
  const qps = options.qps ?? 10;
  const burst = options.burst ?? 100;
  const items = new ItemExponentialLimiter({ baseMs: options.baseMs ?? 5, maxMs: options.maxMs ?? 300_000 });
  const bucket = options.bucketScope === "global"
    ? new BucketLimiter(new TokenBucket(qps, burst, { clock }))
    : new PerClusterLimiter(() => new BucketLimiter(new TokenBucket(qps, burst, { clock })));
  return new MaxOfLimiter(items, bucket);
}

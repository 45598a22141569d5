// Exponential backoff with jitter that resets after a healthy period, as client-go's reflector does.

/** Settings for a Backoff. All durations are milliseconds. */
export interface BackoffOptions {
  /** First delay. Default 800 ms (client-go reflector). */
  initialMs?: number;
  /** Largest delay. Default 30 s. */
  maxMs?: number;
  /** Growth per failure. Default 2. */
  factor?: number;
  /** Fraction of the delay added at random, 0..1. Default 0.2. */
  jitter?: number;
  /** After this long without a failure the next delay starts over. Default 2 min. */
  resetAfterMs?: number;
  /** Random source in [0, 1), injectable for tests. */
  random?: () => number;
}

/**
 * Computes successive reconnect delays.
 *
 * Guarantees: every delay is at least `initialMs` and at most `maxMs * (1 + jitter)`, so a
 * caller that sleeps for `next()` between attempts can never spin hot, and never gives up.
 */
export class Backoff {
  readonly #initial: number;
  readonly #max: number;
  readonly #factor: number;
  readonly #jitter: number;
  readonly #resetAfter: number;
  readonly #random: () => number;
  #current = 0;
  #lastFailureAt = -Infinity;

  constructor(options: BackoffOptions = {}) {
    this.#initial = options.initialMs ?? 800;
    this.#max = options.maxMs ?? 30_000;
    this.#factor = options.factor ?? 2;
    this.#jitter = options.jitter ?? 0.2;
    this.#resetAfter = options.resetAfterMs ?? 120_000;
    this.#random = options.random ?? Math.random;
  }

  /** The delay before the next attempt, given the time of this failure. */
  next(now: number): number {
    if (now - this.#lastFailureAt >= this.#resetAfter) this.#current = 0;
    this.#lastFailureAt = now;
    this.#current = this.#current === 0 ? this.#initial : Math.min(this.#max, this.#current * this.#factor);
    return Math.round(this.#current * (1 + this.#jitter * this.#random()));
  }

  /** Forgets past failures, for example after a successful list. */
  reset(): void {
    this.#current = 0;
    this.#lastFailureAt = -Infinity;
  }
}

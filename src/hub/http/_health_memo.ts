// One health document shared by the requests of a short while, once building it is costly (thousands of clusters).

/** How a HealthMemo decides to build afresh. */
export interface HealthMemoOptions {
  /** Milliseconds, monotonic. Default performance.now. */
  now?: () => number;
  /** A build that took less than this is never reused. Default 5 ms (a few hundred clusters). */
  minCostMs?: number;
  /** A costly build is reused for up to this many times its cost. Default 10. */
  factor?: number;
  /** A build is never reused for longer than this. Default 2000 ms. */
  maxAgeMs?: number;
}

/**
 * Builds a value on demand and reuses it while building it again would cost too much.
 *
 * Guarantees: `get()` builds afresh unless the last build took at least `minCostMs` and ended less than `factor` times
 * its cost ago (and less than `maxAgeMs`): with a few hundred clusters every request sees a fresh document, and with
 * thousands an unauthenticated client hammering the probes costs the hub at most about 1/`factor` of a core, with
 * answers at most `maxAgeMs` old. A build that throws is not kept.
 */
export class HealthMemo<T> {
  readonly #build: () => T;
  readonly #now: () => number;
  readonly #minCostMs: number;
  readonly #factor: number;
  readonly #maxAgeMs: number;
  #last: { value: T; until: number } | undefined;

  constructor(build: () => T, options: HealthMemoOptions = {}) {
    this.#build = build;
    this.#now = options.now ?? (() => performance.now());
    this.#minCostMs = options.minCostMs ?? 5;
    this.#factor = options.factor ?? 10;
    this.#maxAgeMs = options.maxAgeMs ?? 2000;
  }

  get(): T {
    const start = this.#now();
    if (this.#last && start < this.#last.until) return this.#last.value;
    this.#last = undefined;
    const value = this.#build();
    const end = this.#now();
    const cost = end - start;
    if (cost >= this.#minCostMs) this.#last = { value, until: end + Math.min(this.#maxAgeMs, cost * this.#factor) };
    return value;
  }
}

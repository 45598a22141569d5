// One probe answer shared by the requests of a short while, once the hub serves thousands of clusters.

/** When a HealthMemo reuses a value. */
export interface HealthMemoOptions<T> {
  /** How many clusters a value describes. */
  size: (value: T) => number;
  /** A value describing fewer clusters than this is never reused. Default 500. */
  minClusters?: number;
  /** A value is reused for at most this long. Default 1000 ms. */
  maxAgeMs?: number;
  /** Milliseconds, monotonic. Default performance.now. */
  now?: () => number;
}

/**
 * Builds a value on demand and reuses it for a while once it describes many clusters.
 *
 * Guarantees: with fewer than `minClusters` clusters every `get()` builds afresh, so a hub of a few hundred clusters
 * (and every test) sees each change at once; with more, a value is reused for at most `maxAgeMs`, so a client
 * hammering the public probes makes the hub build the answer (a walk over every cluster) at most once per `maxAgeMs`,
 * and the kubelet sees a state at most that old. The decision is by size, not by how long a build took, so a loaded
 * machine never turns the memo on for a small hub. A build that throws is not kept.
 */
export class HealthMemo<T> {
  readonly #build: () => T;
  readonly #size: (value: T) => number;
  readonly #minClusters: number;
  readonly #maxAgeMs: number;
  readonly #now: () => number;
  #last: { value: T; until: number } | undefined;

  constructor(build: () => T, options: HealthMemoOptions<T>) {
    this.#build = build;
    this.#size = options.size;
    this.#minClusters = options.minClusters ?? 500;
    this.#maxAgeMs = options.maxAgeMs ?? 1000;
    this.#now = options.now ?? (() => performance.now());
  }

  get(): T {
    const now = this.#now();
    if (this.#last && now < this.#last.until) return this.#last.value;
    this.#last = undefined;
    const value = this.#build();
    if (this.#size(value) >= this.#minClusters) this.#last = { value, until: now + this.#maxAgeMs };
    return value;
  }
}

// A small bounded cache whose entries expire: the protected port's TokenReview and SubjectAccessReview answers.

import type { Clock } from "../../util/mod.ts";

/**
 * Entries live until their own deadline; past `maxEntries` the oldest inserted entry goes first.
 *
 * Guarantees: never holds more than `maxEntries` entries; `get` never returns an expired value;
 * expired entries are dropped when read or when the cache is full, so memory stays bounded
 * whatever the callers send (e.g. a flood of random tokens).
 */
export class TtlCache<V> {
  readonly #entries = new Map<string, { value: V; expiresAt: number }>();
  readonly #clock: Clock;
  readonly #maxEntries: number;

  constructor(clock: Clock, maxEntries: number) {
    if (!Number.isInteger(maxEntries) || maxEntries < 1) {
      throw new RangeError(`TtlCache maxEntries must be a positive whole number, got ${maxEntries}`);
    }
    this.#clock = clock;
    this.#maxEntries = maxEntries;
  }

  get size(): number {
    return this.#entries.size;
  }

  get(key: string): V | undefined {
    const e = this.#entries.get(key);
    if (!e) return undefined;
    if (e.expiresAt <= this.#clock.now()) {
      this.#entries.delete(key);
      return undefined;
    }
    return e.value;
  }

  set(key: string, value: V, ttlMs: number): void {
    this.#entries.delete(key);
    if (this.#entries.size >= this.#maxEntries) this.#evict();
    this.#entries.set(key, { value, expiresAt: this.#clock.now() + ttlMs });
  }

  /** Drops expired entries; if none expired, the oldest inserted one. */
  #evict(): void {
    const now = this.#clock.now();
    for (const [k, e] of this.#entries) if (e.expiresAt <= now) this.#entries.delete(k);
    if (this.#entries.size < this.#maxEntries) return;
    const oldest = this.#entries.keys().next();
    if (!oldest.done) this.#entries.delete(oldest.value);
  }
}

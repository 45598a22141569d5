// The credentials a KubeClient sends: `access.auth()` cached for a short TTL, fetched once however many ask at once.

import type { Clock } from "../../util/mod.ts";
import { type ClusterAccess, type ClusterAuth, tlsFingerprint } from "./cluster_access.ts";

/** Credentials from `access.auth()` with their TLS digest and when they were fetched. */
export interface Credentials {
  auth: ClusterAuth;
  fp: string;
  at: number;
}

/**
 * One client's cached credentials.
 *
 * Guarantees:
 * - `fresh()` returns the cached credentials while younger than `ttlMs`, without an await or an allocation, so most
 *   requests never wait for credentials;
 * - `get()` asks `access.auth()` at most once at a time: concurrent callers share one pending answer;
 * - `drop()` (after a 401) forgets them and calls `access.invalidate()`, so an exec plugin runs again next time.
 */
export class AuthCache {
  readonly #access: ClusterAccess;
  readonly #clock: Clock;
  readonly #ttlMs: number;
  #cached: Credentials | undefined;
  #pending: Promise<Credentials> | undefined;

  constructor(access: ClusterAccess, clock: Clock, ttlMs: number) {
    this.#access = access;
    this.#clock = clock;
    this.#ttlMs = ttlMs;
  }

  /** The cached credentials while they are fresh, else undefined. */
  fresh(): Credentials | undefined {
    const cached = this.#cached;
    return cached && this.#clock.now() - cached.at < this.#ttlMs ? cached : undefined;
  }

  /** Fresh credentials: the cached ones, or one shared call of `access.auth()`. */
  get(): Promise<Credentials> {
    const cached = this.fresh();
    if (cached) return Promise.resolve(cached);
    this.#pending ??= this.#access.auth().then((auth) => {
      const fresh = { auth, fp: tlsFingerprint(auth), at: this.#clock.now() };
      this.#cached = fresh;
      return fresh;
    }).finally(() => {
      this.#pending = undefined;
    });
    return this.#pending;
  }

  /** The server answered 401: forget the credentials here and in `access`. */
  drop(): void {
    this.#cached = undefined;
    this.#access.invalidate?.();
  }

  /** The client closed: forget the credentials (without invalidating `access`, which others may share). */
  clear(): void {
    this.#cached = undefined;
  }
}

// The transports of one KubeClient: the current one for its credentials' TLS material, and retired ones still draining.

import type { AbortWhy } from "./_call.ts";
import { closeQuietly, type Transport } from "./_transport_interface.ts";
import type { ClusterAuth } from "../config/cluster_access.ts";

/**
 * Which transport a request goes out on, and when a transport is closed.
 *
 * Guarantees:
 * - a new transport is made (by `make`) only when the TLS material's digest `fp` changes, or after the current one was
 *   retired; requests keep going out on one transport in between;
 * - a retired transport takes no new request and is closed once its last request in flight was released (at once
 *   when none is in flight), exactly once;
 * - `close()` closes the current transport and every retired one, whatever is in flight.
 *
 * Assumptions: every `acquire` is matched by exactly one `release` of the transport it returned.
 */
export class TransportPool {
  readonly #make: (auth: ClusterAuth, fp: string) => Transport;
  #current: Transport | undefined;
  /** Retired transports with requests still in flight (made on first use: most clusters never retire one). */
  #retired: Set<Transport> | undefined;

  constructor(make: (auth: ClusterAuth, fp: string) => Transport) {
    this.#make = make;
  }

  /** The transport for this TLS material (made if needed), with one more request counted in flight on it. */
  acquire(auth: ClusterAuth, fp: string): Transport {
    let t = this.#current;
    if (!t || t.fp !== fp) {
      if (t) this.#retire(t);
      t = this.#current = this.#make(auth, fp);
    }
    t.inflight++;
    return t;
  }

  /** A request on `t` finished: a retired `t` is closed with its last request. */
  release(t: Transport): void {
    t.inflight--;
    if (t.retired && t.inflight <= 0 && this.#retired?.delete(t)) closeQuietly(t);
  }

  /** After a timeout (`why`), the connection a request used is presumed dead: retire its transport if still current. */
  suspect(why: AbortWhy | undefined, t: Transport): void {
    if ((why === "timeout" || why === "deadline") && t === this.#current) this.#retire(t);
  }

  /** The next request gets a new transport; the current one is closed once its requests finished. */
  reset(): void {
    if (this.#current) this.#retire(this.#current);
  }

  /**
   * As `reset()`, unless the current transport multiplexes its watches over one connection that received anything
   * within the last `ms` (then that connection is alive and is kept). Returns whether it reset.
   */
  resetUnlessAlive(ms: number): boolean {
    if (this.#current?.aliveWithin?.(ms)) return false;
    this.reset();
    return true;
  }

  /** Whether the current transport's shared connection is alive (see Transport.confirmAlive); false without one. */
  confirmAlive(ms: number, timeoutMs: number): Promise<boolean> {
    return this.#current?.confirmAlive?.(ms, timeoutMs) ?? Promise.resolve(false);
  }

  /** Closes every transport, in flight or not. */
  close(): void {
    for (const t of [this.#current, ...this.#retired ?? []]) {
      if (t) closeQuietly(t);
    }
    this.#current = undefined;
    this.#retired?.clear();
  }

  #retire(t: Transport): void {
    if (this.#current === t) this.#current = undefined;
    if (t.retired) return;
    t.retired = true;
    if (t.inflight <= 0) closeQuietly(t);
    else (this.#retired ??= new Set()).add(t);
  }
}

// A counting semaphore: at most N holders at once, waiters served first come, first served; a waiter can give up.

/**
 * Bounds how many callers do something at once (the hub: how many clusters run their pre-flight together, so
 * thousands of clusters engaged at once do not drown their API servers in handshakes and reviews).
 *
 * Guarantees: `acquire` resolves with a release function that frees the permit once, however often it is called;
 * waiters get permits in the order they asked; a waiter whose `signal` aborts is removed and rejects with the signal's
 * reason, and never holds a permit.
 */
export class Semaphore {
  readonly #permits: number;
  #held = 0;
  readonly #waiting: { grant: () => void }[] = [];

  constructor(permits: number) {
    if (!Number.isInteger(permits) || permits < 1) {
      throw new RangeError(`a semaphore needs at least one permit, got ${permits}`);
    }
    this.#permits = permits;
  }

  /** Permits held now. */
  get held(): number {
    return this.#held;
  }

  /** Callers waiting for a permit now. */
  get waiting(): number {
    return this.#waiting.length;
  }

  /** Waits for a permit; resolves with the function that gives it back. */
  acquire(signal?: AbortSignal): Promise<() => void> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (this.#held < this.#permits) {
      this.#held++;
      return Promise.resolve(this.#releaser());
    }
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        const i = this.#waiting.indexOf(entry);
        if (i >= 0) this.#waiting.splice(i, 1);
        reject(signal!.reason);
      };
      const entry = {
        grant: () => {
          signal?.removeEventListener("abort", onAbort);
          resolve(this.#releaser());
        },
      };
      this.#waiting.push(entry);
      signal?.addEventListener("abort", onAbort, { once: true });
    });
  }

  #releaser(): () => void {
    let done = false;
    return () => {
      if (done) return;
      done = true;
      const next = this.#waiting.shift();
      // The permit passes straight to the next waiter, so `held` stays the same.
      if (next) next.grant();
      else this.#held--;
    };
  }
}

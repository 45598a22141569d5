// The bytes of admission request bodies the hub holds at once, across every connection: a small allowance per body,
// and one shared pool for what goes past it.

/** How many body bytes the admission port holds at once. */
export interface BodyBudgetLimits {
  /** Bytes every body may hold without drawing on the pool: an apiserver's usual review. Default 64 KiB. */
  perBodyBytes?: number;
  /** The pool shared by every body for its bytes past `perBodyBytes`. Default 32 MiB. */
  sharedBytes?: number;
}

/** One body's hold on the budget, from its first byte to its release. */
export interface BodyLease {
  /** Counts `n` more bytes of this body held; false (nothing counted) when the pool has no room for them. */
  take(n: number): boolean;
  /** The body is parsed or dropped: its bytes go back. Idempotent. */
  release(): void;
}

/**
 * A byte budget for the request bodies being read on the admission port, in the spirit of kube-apiserver's
 * max-requests-inflight: a body that would go past it is refused at once, never waited for.
 *
 * Guarantees:
 * - the bytes held by bodies never exceed `perBodyBytes` × the bodies open + `sharedBytes`; with the port's
 *   connection cap (one request at a time per connection) that is at most `maxConnections × perBodyBytes +
 *   sharedBytes` (16 MiB + 32 MiB by default, where 256 bodies of 4 MiB would be 1 GiB);
 * - a body of at most `perBodyBytes` (an apiserver's review of an ordinary object is a few KiB) always fits, however
 *   many large bodies hold the pool: strangers sending large bodies slowly cannot make the apiservers' calls fail;
 * - bytes are counted as they arrive, not as a Content-Length announces them, so a large announcement alone holds
 *   nothing.
 */
export class BodyBudget {
  readonly perBodyBytes: number;
  readonly sharedBytes: number;
  #pooled = 0;
  #refused = 0;

  constructor(limits: BodyBudgetLimits = {}) {
    this.perBodyBytes = nonNegative(limits.perBodyBytes ?? 64 * 1024, "perBodyBytes");
    this.sharedBytes = nonNegative(limits.sharedBytes ?? 32 * 1024 * 1024, "sharedBytes");
  }

  /** Bytes of the shared pool held now. */
  get pooled(): number {
    return this.#pooled;
  }

  /** Bodies refused so far for want of room. */
  get refused(): number {
    return this.#refused;
  }

  /** Starts counting one body. */
  open(): BodyLease {
    let held = 0;
    let pooled = 0;
    let released = false;
    return {
      take: (n) => {
        if (released) return false;
        const want = Math.max(0, held + n - this.perBodyBytes) - pooled;
        if (want > 0 && this.#pooled + want > this.sharedBytes) {
          this.#refused++;
          return false;
        }
        held += n;
        if (want > 0) {
          pooled += want;
          this.#pooled += want;
        }
        return true;
      },
      release: () => {
        if (released) return;
        released = true;
        this.#pooled -= pooled;
        pooled = 0;
      },
    };
  }
}

function nonNegative(value: number, what: string): number {
  if (!Number.isFinite(value) || value < 0) {
    throw new RangeError(`cannot make a body budget: ${what} must be a number of bytes, got ${value}`);
  }
  return value;
}

// Time source for everything that waits: the real clock, or a virtual one that tests advance by hand.

/**
 * A cancellable timer handle.
 *
 * @example
 * ```ts
 * import type { Clock } from "../../kube.ts";
 * declare const clock: Clock;
 * const timeout = clock.setTimer(30_000, () => console.log("no answer in 30 s"));
 * // ... the answer arrived in time:
 * timeout.cancel();
 * ```
 */
export interface Timer {
  /** Stops the timer; its function will not run. Idempotent. */
  cancel(): void;
}

/**
 * Everything in src/ that needs time takes a Clock through its options.
 *
 * @example
 * ```ts
 * import type { Clock } from "../../kube.ts";
 * // Polls `ready` every second on `clock` (a test passes a virtual one) until it is true or `signal` aborts.
 * async function waitFor(ready: () => boolean, clock: Clock, signal: AbortSignal): Promise<boolean> {
 *   while (!ready() && !signal.aborted) await clock.sleep(1_000, signal);
 *   return ready();
 * }
 * ```
 */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Calls `fn` once after `ms` milliseconds unless cancelled. */
  setTimer(ms: number, fn: () => void): Timer;
  /** Resolves after `ms` milliseconds, or early (without rejecting) when `signal` aborts. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/** Resolves after `ms` on `clock`, or as soon as `signal` aborts. Never rejects. */
function sleepOn(clock: Clock, ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const onAbort = () => {
      timer.cancel();
      resolve();
    };
    const timer = clock.setTimer(ms, () => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    });
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/**
 * The wall clock, backed by setTimeout.
 *
 * Timers of `COARSE_FROM_MS` or more (request and reconcile timeouts, watch deadlines: set for every
 * request, almost always cancelled) share one setTimeout through {@linkcode CoarseTimers}: they fire
 * never early and at most `SLOT_MS` late, and setting or cancelling one is a Set operation instead
 * of a runtime timer (in Deno 2 a Node-style Timeout with an async id) each time.
 */
export class SystemClock implements Clock {
  now(): number {
    return Date.now();
  }
  setTimer(ms: number, fn: () => void): Timer {
    if (ms >= COARSE_FROM_MS) return coarse.add(ms, fn);
    const id = setTimeout(fn, Math.max(0, ms));
    return { cancel: () => clearTimeout(id) };
  }
  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return sleepOn(this, ms, signal);
  }
}

/** Timers at least this long are coarse (see SystemClock). */
export const COARSE_FROM_MS = 5_000;
/** Resolution of coarse timers. */
export const SLOT_MS = 100;

/** One coarse timer: its own handle, so setting one allocates a single object. */
class CoarseEntry implements Timer {
  readonly fn: () => void;
  readonly #owner: CoarseTimers;
  readonly #slot: number;
  #set: Set<CoarseEntry> | undefined;

  constructor(owner: CoarseTimers, slot: number, set: Set<CoarseEntry>, fn: () => void) {
    this.#owner = owner;
    this.#slot = slot;
    this.#set = set;
    this.fn = fn;
  }

  cancel(): void {
    const set = this.#set;
    this.#set = undefined;
    if (set?.delete(this) && set.size === 0) this.#owner.emptied(this.#slot, set);
  }

  /** Detaches the entry as it fires (a later cancel is a no-op). */
  take(): void {
    this.#set = undefined;
  }
}

/**
 * Long timers grouped by the `SLOT_MS` slot they are due in, behind a single setTimeout armed for the
 * earliest non-empty slot. Guarantees: a callback never runs before its due time, nor more than one
 * slot after it (event loop permitting); a cancelled one never runs; with no timers pending, no
 * setTimeout is left (the process may exit). Setting, cancelling and firing allocate nothing per pending timer: the
 * due slots come off a binary min-heap of slot numbers (a slot emptied by cancels stays in it until it surfaces).
 */
export class CoarseTimers {
  readonly #slots = new Map<number, Set<CoarseEntry>>();
  /** Min-heap of slot numbers; may hold slots no longer in `#slots` (emptied), skipped when they surface. */
  readonly #heap: number[] = [];
  readonly #now: () => number;
  #armed: { slot: number; id: ReturnType<typeof setTimeout> } | undefined;

  constructor(now: () => number = Date.now) {
    this.#now = now;
  }

  /** Timers pending, for tests. */
  get size(): number {
    let n = 0;
    for (const set of this.#slots.values()) n += set.size;
    return n;
  }

  add(ms: number, fn: () => void): Timer {
    const slot = Math.ceil((this.#now() + ms) / SLOT_MS);
    let set = this.#slots.get(slot);
    if (!set) {
      this.#slots.set(slot, set = new Set());
      this.#push(slot);
    }
    const entry = new CoarseEntry(this, slot, set, fn);
    set.add(entry);
    if (!this.#armed || slot < this.#armed.slot) this.#arm(slot);
    return entry;
  }

  /** A slot's last timer was cancelled. */
  emptied(slot: number, set: Set<CoarseEntry>): void {
    if (this.#slots.get(slot) !== set) return;
    this.#slots.delete(slot);
    if (this.#armed?.slot === slot) this.#arm(this.#earliest());
  }

  /** The earliest slot with timers, dropping emptied ones off the heap's top. */
  #earliest(): number | undefined {
    while (this.#heap.length > 0 && !this.#slots.has(this.#heap[0])) this.#pop();
    return this.#heap[0];
  }

  #arm(slot: number | undefined): void {
    if (this.#armed) clearTimeout(this.#armed.id);
    this.#armed = undefined;
    if (slot === undefined) return;
    const id = setTimeout(() => this.#fire(), Math.max(0, slot * SLOT_MS - this.#now()));
    this.#armed = { slot, id };
  }

  #fire(): void {
    this.#armed = undefined;
    const current = Math.floor(this.#now() / SLOT_MS);
    for (let slot = this.#earliest(); slot !== undefined && slot <= current; slot = this.#earliest()) {
      const set = this.#slots.get(slot)!;
      this.#slots.delete(slot);
      this.#pop();
      for (const entry of set) {
        entry.take();
        try {
          entry.fn();
        } catch (err) {
          // Like a throwing setTimeout callback: reported, and the other timers still run.
          queueMicrotask(() => {
            throw err;
          });
        }
      }
    }
    this.#arm(this.#earliest());
  }

  #push(slot: number): void {
    const h = this.#heap;
    let i = h.push(slot) - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (h[parent] <= slot) break;
      h[i] = h[parent];
      i = parent;
    }
    h[i] = slot;
  }

  #pop(): void {
    const h = this.#heap;
    const last = h.pop()!;
    if (h.length === 0) return;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= h.length) break;
      const c = l + 1 < h.length && h[l + 1] < h[l] ? l + 1 : l;
      if (h[c] >= last) break;
      h[i] = h[c];
      i = c;
    }
    h[i] = last;
  }
}

const coarse = new CoarseTimers();

interface PendingTimer {
  at: number;
  seq: number;
  fn: () => void;
  cancelled: boolean;
}

/**
 * A clock that only moves when a test calls `advance`. Timers fire in due order, and
 * microtasks run between them, so awaiting code observes time as it would for real.
 */
export class VirtualClock implements Clock {
  #now: number;
  #seq = 0;
  #timers: PendingTimer[] = [];

  constructor(start = 0) {
    this.#now = start;
  }

  now(): number {
    return this.#now;
  }

  setTimer(ms: number, fn: () => void): Timer {
    const t: PendingTimer = { at: this.#now + Math.max(0, ms), seq: this.#seq++, fn, cancelled: false };
    this.#timers.push(t);
    return {
      cancel: () => {
        t.cancelled = true;
      },
    };
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return sleepOn(this, ms, signal);
  }

  /** Number of timers that are still due to fire. */
  get pending(): number {
    return this.#timers.filter((t) => !t.cancelled).length;
  }

  /** Moves time forward by `ms`, firing every timer that falls due, in order. */
  async advance(ms: number): Promise<void> {
    const target = this.#now + ms;
    for (;;) {
      await flushMicrotasks();
      const due = this.#timers
        .filter((t) => !t.cancelled && t.at <= target)
        .sort((a, b) => a.at - b.at || a.seq - b.seq)[0];
      if (!due) break;
      this.#timers = this.#timers.filter((t) => t !== due && !t.cancelled);
      this.#now = Math.max(this.#now, due.at);
      due.fn();
    }
    this.#now = target;
    await flushMicrotasks();
  }
}

/**
 * Lets pending promise continuations run. Between two virtual timers, a chain of awaits shorter than `rounds` settles;
 * a size-capped body read through a stream reader takes about 25 hops, so the default leaves room above it.
 */
export async function flushMicrotasks(rounds = 64): Promise<void> {
  for (let i = 0; i < rounds; i++) await Promise.resolve();
}

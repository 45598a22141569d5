// Which connection a capped port closes to make room for a new one: the one idle longest, then the slowest body.

/**
 * What a connection is doing, as far as making room goes:
 * - `idle`: no request in progress (its TLS handshake, a request head still arriving, kept alive between requests);
 * - `body`: its request head arrived and its body is still arriving;
 * - `busy`: its whole request arrived and is being answered.
 */
export type SlotState = "idle" | "body" | "busy";

/** What a capped server tells about its connections: the gate's view of a slot table (ConnectionSlots, or a front's). */
export interface SlotTable<K> {
  /** Gives `key` a slot, idle, making room if need be; false when there is none (refuse it). */
  open(key: K, evict: () => void): boolean;
  /** Whether `key` still holds its slot (false once closed to make room). */
  has(key: K): boolean;
  /** `key` is now in `state`. */
  mark(key: K, state: SlotState): void;
  /** `key` was closed: its slot is free. */
  close(key: K): void;
}

/** How many connections a table made room by closing, by what they were doing. */
export interface SlotEvictions {
  idle: number;
  body: number;
}

/**
 * The open connections of one port (or of several servers behind one public socket) and what each is doing.
 *
 * Guarantees:
 * - at most `max` connections hold a slot at once;
 * - `open` at the cap closes (calls the `evict` given at that connection's own `open`) the connection idle the
 *   longest; when none is idle, the one whose body has been arriving the longest; when every connection's request is
 *   whole and being answered, it closes none and returns false, and the caller refuses the newcomer;
 * - "longest" counts from a connection's last change of state: one kept alive is ordered by when it last became idle
 *   (its last answer), not by when it was accepted, so a client that just got an answer is the last to go;
 * - an evicted connection's slot is free when `open` returns; its later `mark` and `close` do nothing. Every operation
 *   is O(1).
 * Assumptions: the owner calls `close` for every connection it opened, once it is closed.
 */
export class ConnectionSlots<K> implements SlotTable<K> {
  readonly max: number;
  /** Per state, the connections in it and how to close each, oldest change of state first. */
  readonly #byState: Record<SlotState, Map<K, () => void>> = { idle: new Map(), body: new Map(), busy: new Map() };
  readonly #state = new Map<K, SlotState>();
  readonly #evictions: SlotEvictions = { idle: 0, body: 0 };

  constructor(max: number) {
    if (!Number.isInteger(max) || max <= 0) {
      throw new RangeError(`cannot make connection slots: the cap must be a positive integer, got ${max}`);
    }
    this.max = max;
  }

  /** Connections holding a slot. */
  get size(): number {
    return this.#state.size;
  }

  /** Connections closed to make room so far. */
  get evictions(): Readonly<SlotEvictions> {
    return { ...this.#evictions };
  }

  /** How many connections are in `state` now. */
  count(state: SlotState): number {
    return this.#byState[state].size;
  }

  /** Whether `key` holds a slot (false once evicted or closed). */
  has(key: K): boolean {
    return this.#state.has(key);
  }

  /**
   * Gives `key` a slot, idle, making room at the cap (see the class); false when there is no room (refuse it).
   * `evict` closes the connection; it is called at most once, and never after `close(key)`.
   */
  open(key: K, evict: () => void): boolean {
    if (this.#state.has(key)) return true;
    if (this.#state.size >= this.max && !this.#evictOne()) return false;
    this.#state.set(key, "idle");
    this.#byState.idle.set(key, evict);
    return true;
  }

  /** `key` is now in `state`; it becomes the newest there. Nothing changes when it is in `state` already. */
  mark(key: K, state: SlotState): void {
    const was = this.#state.get(key);
    if (was === undefined || was === state) return;
    const evict = this.#byState[was].get(key)!;
    this.#byState[was].delete(key);
    this.#byState[state].set(key, evict);
    this.#state.set(key, state);
  }

  /** Frees `key`'s slot (it was closed); its `evict` is not called. */
  close(key: K): void {
    const was = this.#state.get(key);
    if (was === undefined) return;
    this.#state.delete(key);
    this.#byState[was].delete(key);
  }

  #evictOne(): boolean {
    for (const state of ["idle", "body"] as const) {
      const oldest = this.#byState[state].entries().next();
      if (oldest.done) continue;
      const [key, evict] = oldest.value;
      this.close(key);
      this.#evictions[state]++;
      evict();
      return true;
    }
    return false;
  }
}

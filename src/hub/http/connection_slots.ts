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

/** The table's limits beyond its cap. */
export interface ConnectionSlotsOptions {
  /**
   * A connection just answered and kept alive is closed to make room only after every other idle one, for this long
   * after its answer. Default 2 s.
   */
  keptGraceMs?: number;
  /** At most this many connections have that grace at once (the most recently answered). Default half the cap. */
  keptMax?: number;
  /** The clock (ms), for tests on virtual time. Default Date.now. */
  now?: () => number;
}

/** Where a connection is kept: `idle` (no grace), idle with the grace after an answer (`kept`), `body`, `busy`. */
type Tier = "idle" | "kept" | "body" | "busy";

interface Slot {
  tier: Tier;
  evict: () => void;
  /** When it entered its tier. */
  since: number;
}

/**
 * The open connections of one port (or of several servers behind one public socket) and what each is doing.
 *
 * Guarantees:
 * - at most `max` connections hold a slot at once;
 * - `open` at the cap closes (calls the `evict` given at that connection's own `open`) an idle connection: the one
 *   idle the longest, except that one answered less than `keptGraceMs` ago (kept alive between requests; at most
 *   `keptMax` of them, the most recently answered) goes after every other idle one; when none is idle, the one whose
 *   body has been arriving the longest; when every connection's request is whole and being answered, it closes none
 *   and returns false, and the caller refuses the newcomer;
 * - so a flood of idle connections pushes out its own oldest first, a client's new connection has `max` newcomers'
 *   time to send its request, and a client reusing a kept-alive connection soon after an answer does not find it
 *   closed under it (an HTTP client does not resend a POST on a connection closed as it wrote); strangers who get
 *   answers hold at most `keptMax` graces, so newcomers always have the other half of the slots;
 * - "longest" counts from a connection's last change of state (a grace that runs out counts as a change);
 * - an evicted connection's slot is free when `open` returns; its later `mark` and `close` do nothing. Operations are
 *   O(1) but for ending graces, each once per answer.
 * Assumptions: the owner calls `close` for every connection it opened, once it is closed.
 */
export class ConnectionSlots<K> implements SlotTable<K> {
  readonly max: number;
  readonly #graceMs: number;
  readonly #keptMax: number;
  readonly #now: () => number;
  /** Per tier, its connections in the order they entered it. */
  readonly #tiers: Record<Tier, Map<K, Slot>> = { idle: new Map(), kept: new Map(), body: new Map(), busy: new Map() };
  readonly #slots = new Map<K, Slot>();
  readonly #evictions: SlotEvictions = { idle: 0, body: 0 };

  constructor(max: number, options: ConnectionSlotsOptions = {}) {
    if (!Number.isInteger(max) || max <= 0) {
      throw new RangeError(`cannot make connection slots: the cap must be a positive integer, got ${max}`);
    }
    this.max = max;
    this.#graceMs = options.keptGraceMs ?? 2_000;
    this.#keptMax = options.keptMax ?? Math.floor(max / 2);
    this.#now = options.now ?? Date.now;
  }

  /** Connections holding a slot. */
  get size(): number {
    return this.#slots.size;
  }

  /** Connections closed to make room so far. */
  get evictions(): Readonly<SlotEvictions> {
    return { ...this.#evictions };
  }

  /** How many connections are in `state` now. */
  count(state: SlotState): number {
    return state === "idle" ? this.#tiers.idle.size + this.#tiers.kept.size : this.#tiers[state].size;
  }

  /** Whether `key` holds a slot (false once evicted or closed). */
  has(key: K): boolean {
    return this.#slots.has(key);
  }

  /**
   * Gives `key` a slot, idle, making room at the cap (see the class); false when there is no room (refuse it).
   * `evict` closes the connection; it is called at most once, and never after `close(key)`.
   */
  open(key: K, evict: () => void): boolean {
    if (this.#slots.has(key)) return true;
    if (this.#slots.size >= this.max && !this.#evictOne()) return false;
    this.#enter(key, { tier: "idle", evict, since: 0 });
    return true;
  }

  /**
   * `key` is now in `state`; it becomes the newest there. Idle after a request (an answer: kept alive) starts its
   * grace. Nothing changes when it is in `state` already.
   */
  mark(key: K, state: SlotState): void {
    const slot = this.#slots.get(key);
    if (!slot) return;
    // Idle after a request (body or busy) is kept alive after an answer: it starts a grace.
    const tier: Tier = state === "idle" && (slot.tier === "body" || slot.tier === "busy") ? "kept" : state;
    if (tier === slot.tier || (tier === "idle" && slot.tier === "kept")) return;
    this.#tiers[slot.tier].delete(key);
    this.#enter(key, { ...slot, tier });
    if (tier === "kept") this.#endGraces();
  }

  /** Frees `key`'s slot (it was closed); its `evict` is not called. */
  close(key: K): void {
    const slot = this.#slots.get(key);
    if (!slot) return;
    this.#slots.delete(key);
    this.#tiers[slot.tier].delete(key);
  }

  #enter(key: K, slot: Slot): void {
    slot.since = this.#now();
    this.#slots.set(key, slot);
    this.#tiers[slot.tier].set(key, slot);
  }

  /** Kept-alive connections past their grace, or beyond `keptMax`, become ordinary idle ones (the newest). */
  #endGraces(): void {
    const kept = this.#tiers.kept;
    const now = this.#now();
    for (const [key, slot] of kept) {
      if (kept.size <= this.#keptMax && now - slot.since < this.#graceMs) break;
      kept.delete(key);
      this.#enter(key, { ...slot, tier: "idle" });
    }
  }

  #evictOne(): boolean {
    this.#endGraces();
    for (const tier of ["idle", "kept", "body"] as const) {
      const oldest = this.#tiers[tier].entries().next();
      if (oldest.done) continue;
      const [key, slot] = oldest.value;
      this.close(key);
      this.#evictions[tier === "body" ? "body" : "idle"]++;
      slot.evict();
      return true;
    }
    return false;
  }
}

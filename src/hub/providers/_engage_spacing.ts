// How often one cluster name may be engaged: a source that changes faster than its cluster can be engaged is damped.

import type { Clock, Timer } from "../../util/mod.ts";

/** How the spacing is kept. */
export interface EngageSpacingOptions {
  /** The least time between two engages of one name, in ms. 0 turns the spacing off. */
  intervalMs: number;
  clock: Clock;
  /** Called once a deferred name may be engaged (the registry marks it for a sync, which reads the latest offer). */
  due(name: string): void;
}

interface Entry {
  /** When the name was last engaged (clock ms). */
  at: number;
  /** Changes deferred since then. */
  deferred: number;
  /** Set while a deferred engage waits for its turn. */
  timer?: Timer;
}

/**
 * Spaces the engages of each name at least `intervalMs` apart.
 *
 * Guarantees:
 * - a name never engaged, or last engaged `intervalMs` ago or longer, may be engaged at once (`wait` is 0);
 * - a name engaged less than `intervalMs` ago waits: `defer` schedules one `due(name)` for the moment it may be
 *   engaged again, however many changes arrive until then (what is engaged then is whatever is offered then: the
 *   latest content wins), and counts them; `engaged` answers that count, so a burst is logged as one line;
 * - memory is bounded by the names engaged within the last `intervalMs` (twice that for a name that had a burst;
 *   older entries are dropped as calls come in) plus the names waiting; `stop` cancels every timer.
 *
 * Assumptions: the caller calls `engaged(name)` on every engage of `name` and nothing else engages it; withdrawals
 * and in-place credential swaps are not spaced (they free resources or cost nothing).
 */
export class EngageSpacing {
  readonly #o: EngageSpacingOptions;
  /** In order of last engage (re-inserted on each), so the oldest are at the head. */
  readonly #entries = new Map<string, Entry>();

  constructor(options: EngageSpacingOptions) {
    this.#o = options;
  }

  /** The least time between two engages of one name, in ms. */
  get intervalMs(): number {
    return this.#o.intervalMs;
  }

  /** Names remembered now (engaged recently or waiting): for tests of the bound. */
  get size(): number {
    return this.#entries.size;
  }

  /** Milliseconds until `name` may be engaged; 0 for now. */
  wait(name: string): number {
    this.#prune();
    const e = this.#entries.get(name);
    if (!e) return 0;
    return Math.max(0, e.at + this.#o.intervalMs - this.#o.clock.now());
  }

  /** Records a change of `name` that must wait, and schedules its `due` once (later changes join the same wait). */
  defer(name: string): void {
    const e = this.#entries.get(name);
    if (!e) return;
    e.deferred++;
    if (e.timer) return;
    e.timer = this.#o.clock.setTimer(this.wait(name), () => {
      e.timer = undefined;
      this.#o.due(name);
    });
  }

  /** Records an engage of `name` now; answers how many changes were deferred since the one before (0: none). */
  engaged(name: string): number {
    if (this.#o.intervalMs <= 0) return 0;
    const e = this.#entries.get(name);
    e?.timer?.cancel();
    this.#entries.delete(name);
    this.#entries.set(name, { at: this.#o.clock.now(), deferred: 0 });
    this.#prune();
    return e?.deferred ?? 0;
  }

  /** Cancels every waiting timer and forgets everything. */
  stop(): void {
    for (const e of this.#entries.values()) e.timer?.cancel();
    this.#entries.clear();
  }

  /**
   * Drops the entries whose interval has passed and that wait for nothing, oldest first. One whose deferred engage fell
   * due is kept for another interval, so the engage that follows learns its count.
   */
  #prune(): void {
    const now = this.#o.clock.now();
    for (const [name, e] of this.#entries) {
      if (e.timer || e.at + this.#o.intervalMs * (e.deferred > 0 ? 2 : 1) > now) break;
      this.#entries.delete(name);
    }
  }
}

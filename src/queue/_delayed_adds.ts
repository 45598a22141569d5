// The delayed adds of one cluster in the work queue: one clock timer for all of them, private to src/queue.

import type { Clock, Timer } from "../util/clock.ts";
import { Heap } from "./_heap.ts";
import type { QueuePriority } from "./_lane.ts";

interface Delayed<T> {
  readonly key: string;
  readonly item: T;
  readonly at: number;
  readonly seq: number;
  priority: QueuePriority;
}

/**
 * Keys waiting for their due time, each handed to `due` once it passed.
 *
 * Guarantees:
 * - one clock timer, armed for the earliest due key, and none while nothing waits, so 30,000 delayed keys cost one
 *   timer and `clear` leaves none behind;
 * - a key waits once: scheduling it again keeps the earlier due time and the higher priority;
 * - keys due at the same time come out in the order they were scheduled;
 * - `schedule` is O(log n); stale heap entries are dropped once they outnumber the live ones (plus 64).
 */
export class DelayedAdds<T> {
  readonly #clock: Clock;
  readonly #due: (item: T, priority: QueuePriority) => void;
  /** Latest entry per key; older heap entries for the same key are stale. */
  readonly #latest = new Map<string, Delayed<T>>();
  readonly #heap = new Heap<Delayed<T>>((a, b) => a.at < b.at || (a.at === b.at && a.seq < b.seq));
  #seq = 0;
  #timer: Timer | undefined;
  #timerAt = Infinity;

  constructor(clock: Clock, due: (item: T, priority: QueuePriority) => void) {
    this.#clock = clock;
    this.#due = due;
  }

  /** Keys waiting. */
  get size(): number {
    return this.#latest.size;
  }

  /**
   * Hands `item` to `due` after `ms` milliseconds (at least one timer turn), unless the item of the same `key` already
   * waits for less.
   */
  schedule(key: string, item: T, ms: number, priority: QueuePriority): void {
    const at = this.#clock.now() + ms;
    const existing = this.#latest.get(key);
    if (existing && existing.at <= at) {
      if (priority === "live") existing.priority = "live";
      return;
    }
    const entry: Delayed<T> = {
      key,
      item,
      at,
      seq: this.#seq++,
      priority: existing?.priority === "live" ? "live" : priority,
    };
    this.#latest.set(key, entry);
    this.#heap.push(entry);
    if (this.#heap.length > 2 * this.#latest.size + 64) this.#heap.rebuild([...this.#latest.values()]);
    this.#arm();
  }

  /** Drops every waiting key and cancels the timer. */
  clear(): void {
    this.#timer?.cancel();
    this.#timer = undefined;
    this.#timerAt = Infinity;
    this.#latest.clear();
    this.#heap.rebuild([]);
  }

  /** Makes sure the timer fires by the earliest valid due time, and only when there is one. */
  #arm(): void {
    let top = this.#heap.peek();
    while (top && this.#latest.get(top.key) !== top) {
      this.#heap.pop();
      top = this.#heap.peek();
    }
    if (!top) {
      this.#timer?.cancel();
      this.#timer = undefined;
      this.#timerAt = Infinity;
      return;
    }
    if (this.#timer && this.#timerAt <= top.at) return;
    this.#timer?.cancel();
    this.#timerAt = top.at;
    this.#timer = this.#clock.setTimer(top.at - this.#clock.now(), () => this.#fire());
  }

  #fire(): void {
    this.#timer = undefined;
    this.#timerAt = Infinity;
    const now = this.#clock.now();
    for (let top = this.#heap.peek(); top && top.at <= now; top = this.#heap.peek()) {
      this.#heap.pop();
      if (this.#latest.get(top.key) !== top) continue;
      this.#latest.delete(top.key);
      this.#due(top.item, top.priority);
    }
    this.#arm();
  }
}

// One priority lane of one cluster in the work queue: a FIFO of queued entries, private to src/queue.

import { Fifo } from "./_fifo.ts";

/**
 * How soon a queued key is handed out. `live`: a change seen on a watch, or a requeue of such a key. `low`: a key
 * from an initial list, a relist or a resync (everything queued again at once), handed out only while no cluster
 * has a live key queued, as controller-runtime's priority queue does with items from an initial list.
 */
export type QueuePriority = "live" | "low";

/**
 * A queued key by its id (see keyId): when it became dirty and the lane it waits in (a promotion moves a low entry to
 * the live lane).
 */
export interface Entry {
  readonly key: string;
  readonly at: number;
  priority: QueuePriority;
}

/**
 * The entries of one cluster waiting in one lane, oldest first.
 *
 * Guarantees: `length` counts only the entries still waiting here; an entry promoted out of the low lane leaves a
 * stale copy behind that `shift` and `peek` skip, and the copies are dropped once they outnumber the entries waiting
 * (plus 64), so promotions never grow the lane without bound.
 */
export class Lane<E extends Entry = Entry> {
  readonly priority: QueuePriority;
  readonly #fifo = new Fifo<E>();
  #waiting = 0;
  /** In its lane's round-robin ring of clusters. */
  inRing = false;

  constructor(priority: QueuePriority) {
    this.priority = priority;
  }

  /** Entries waiting here (stale copies not counted). */
  get length(): number {
    return this.#waiting;
  }

  push(e: E): void {
    this.#fifo.push(e);
    this.#waiting++;
  }

  /** The oldest waiting entry, removed; undefined when none waits. */
  shift(): E | undefined {
    for (let e = this.#fifo.shift(); e !== undefined; e = this.#fifo.shift()) {
      if (e.priority !== this.priority) continue;
      this.#waiting--;
      if (this.#waiting === 0) this.#fifo.clear();
      return e;
    }
    return undefined;
  }

  /** The oldest waiting entry, left in place. */
  peek(): E | undefined {
    for (let e = this.#fifo.peek(); e !== undefined; e = this.#fifo.peek()) {
      if (e.priority === this.priority) return e;
      this.#fifo.shift();
    }
    return undefined;
  }

  /** Counts `e` as gone to another lane (its priority already changed); its copy here is now stale. */
  left(): void {
    this.#waiting--;
    const stale = this.#fifo.length - this.#waiting;
    if (this.#waiting === 0) this.#fifo.clear();
    else if (stale > this.#waiting + 64) {
      const keep = [...this.#fifo].filter((x) => x.priority === this.priority);
      this.#fifo.clear();
      for (const x of keep) this.#fifo.push(x);
    }
  }

  /** Every waiting entry, oldest first. Do not change the lane while iterating. */
  *[Symbol.iterator](): IterableIterator<E> {
    for (const e of this.#fifo) if (e.priority === this.priority) yield e;
  }

  clear(): void {
    this.#fifo.clear();
    this.#waiting = 0;
  }
}

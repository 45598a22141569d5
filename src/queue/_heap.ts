// A binary min-heap, private to src/queue, for delayed adds.

/**
 * A min-heap ordered by `less`.
 *
 * Guarantees: `push` and `pop` are O(log n); `peek` is O(1). Ties come out in no particular
 * order, so callers that need insertion order put a sequence number into `less`.
 */
export class Heap<T> {
  readonly #less: (a: T, b: T) => boolean;
  #items: T[] = [];

  constructor(less: (a: T, b: T) => boolean) {
    this.#less = less;
  }

  get length(): number {
    return this.#items.length;
  }

  peek(): T | undefined {
    return this.#items[0];
  }

  push(item: T): void {
    const items = this.#items;
    items.push(item);
    let i = items.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.#less(items[i], items[parent])) break;
      [items[i], items[parent]] = [items[parent], items[i]];
      i = parent;
    }
  }

  pop(): T | undefined {
    const items = this.#items;
    if (items.length === 0) return undefined;
    const top = items[0];
    const last = items.pop() as T;
    if (items.length > 0) {
      items[0] = last;
      this.#down(0);
    }
    return top;
  }

  /** Replaces the contents with `items` in O(n). */
  rebuild(items: T[]): void {
    this.#items = items;
    for (let i = (items.length >> 1) - 1; i >= 0; i--) this.#down(i);
  }

  #down(start: number): void {
    const items = this.#items;
    const n = items.length;
    let i = start;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < n && this.#less(items[l], items[m])) m = l;
      if (r < n && this.#less(items[r], items[m])) m = r;
      if (m === i) return;
      [items[i], items[m]] = [items[m], items[i]];
      i = m;
    }
  }
}

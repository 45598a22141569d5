// A growable ring buffer: O(1) push and shift, private to src/queue.

const MIN_CAPACITY = 16;

/**
 * First in, first out, without `Array.shift`.
 *
 * Guarantees: `push` and `shift` are O(1) amortised; the buffer doubles when full and halves when
 * three quarters empty (never below 16 slots), so a drained burst of 30,000 keys gives its memory back.
 * Shifted slots are cleared, so the buffer never keeps a removed value alive.
 */
export class Fifo<T> {
  #buf: (T | undefined)[] = new Array(MIN_CAPACITY);
  #head = 0;
  #size = 0;

  get length(): number {
    return this.#size;
  }

  push(value: T): void {
    if (this.#size === this.#buf.length) this.#resize(this.#buf.length * 2);
    this.#buf[(this.#head + this.#size) & (this.#buf.length - 1)] = value;
    this.#size++;
  }

  /** Removes and returns the oldest value, or undefined when empty. */
  shift(): T | undefined {
    if (this.#size === 0) return undefined;
    const value = this.#buf[this.#head];
    this.#buf[this.#head] = undefined;
    this.#head = (this.#head + 1) & (this.#buf.length - 1);
    this.#size--;
    if (this.#buf.length > MIN_CAPACITY && this.#size <= this.#buf.length / 4) this.#resize(this.#buf.length / 2);
    return value;
  }

  /** The oldest value without removing it. */
  peek(): T | undefined {
    return this.#size === 0 ? undefined : this.#buf[this.#head];
  }

  clear(): void {
    this.#buf = new Array(MIN_CAPACITY);
    this.#head = 0;
    this.#size = 0;
  }

  /** Values oldest first. Do not push or shift while iterating. */
  *[Symbol.iterator](): IterableIterator<T> {
    const mask = this.#buf.length - 1;
    for (let i = 0; i < this.#size; i++) yield this.#buf[(this.#head + i) & mask] as T;
  }

  #resize(capacity: number): void {
    const next: (T | undefined)[] = new Array(capacity);
    const mask = this.#buf.length - 1;
    for (let i = 0; i < this.#size; i++) next[i] = this.#buf[(this.#head + i) & mask];
    this.#buf = next;
    this.#head = 0;
  }
}

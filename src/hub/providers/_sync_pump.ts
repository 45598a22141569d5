// Runs one sync per marked name, several names at once, until stopped: the registry's engine.

/** How a SyncPump runs its syncs. */
export interface SyncPumpOptions {
  /** Names synced at once. */
  concurrency: number;
  /** A sync that threw; the pump goes on with the other names. */
  onError(name: string, err: unknown): void;
}

/**
 * Keeps every marked name synced: `sync(name)` runs once per mark, later marks of a name being synced run again after.
 *
 * Guarantees: nothing runs before `enable`; at most `concurrency` syncs run at once and never two of one name; a name
 * marked while it syncs is synced again once that sync ended (marks in between coalesce); `idle` resolves once nothing
 * is marked or running; after `stop` nothing new starts, and `stop` resolves once the syncs running ended.
 */
export class SyncPump {
  readonly #sync: (name: string) => Promise<void>;
  readonly #o: SyncPumpOptions;
  readonly #dirty = new Set<string>();
  readonly #syncing = new Map<string, Promise<void>>();
  #idleWaiters: (() => void)[] = [];
  #enabled = false;
  #stopped = false;

  constructor(sync: (name: string) => Promise<void>, options: SyncPumpOptions) {
    this.#sync = sync;
    this.#o = options;
  }

  /** True once `stop` was called. */
  get stopped(): boolean {
    return this.#stopped;
  }

  /** Asks for `name` to be synced (again). */
  mark(name: string): void {
    if (this.#stopped) return;
    this.#dirty.add(name);
    this.#pump();
  }

  /** Starts syncing: every name marked so far now, later ones as they are marked. */
  enable(): void {
    this.#enabled = true;
    this.#pump();
  }

  /** Resolves once nothing is marked or syncing. */
  idle(): Promise<void> {
    if (this.#dirty.size === 0 && this.#syncing.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idleWaiters.push(resolve));
  }

  /** Starts nothing more, forgets the marks, and resolves once the syncs running ended. */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#dirty.clear();
    await Promise.all(this.#syncing.values());
  }

  #pump(): void {
    if (!this.#enabled) return;
    for (const name of this.#dirty) {
      if (this.#syncing.size >= this.#o.concurrency) break;
      if (this.#syncing.has(name)) continue;
      this.#dirty.delete(name);
      const run = this.#sync(name).catch((err) => this.#o.onError(name, err)).finally(() => {
        this.#syncing.delete(name);
        this.#pump();
        if (this.#dirty.size === 0 && this.#syncing.size === 0) {
          const waiters = this.#idleWaiters;
          this.#idleWaiters = [];
          for (const w of waiters) w();
        }
      });
      this.#syncing.set(name, run);
    }
  }
}

// One resource's cache in one cluster: its store, the watches that keep it current, and the fan-out of what changed.

import type { QueuePriority } from "../queue/mod.ts";
import { type Projection, Store } from "./store.ts";
import type { Watcher } from "./watcher.ts";

/** Told the store keys that changed, at `priority` (`low` from a list, a relist or a replay; `live` from a watch event). */
export type InformerListener = (keys: string[], priority: QueuePriority) => void;

/** Makes the watches that fill `store`, each reporting its changes to `onChange` (one per namespace watched, say). */
export type WatchFactory = (store: Store, onChange: InformerListener) => Watcher[];

/**
 * One resource's watch and cache in one cluster, shared by every handler of that resource and projection (what
 * client-go calls a shared informer).
 *
 * Guarantees:
 * - every listener is told every change, after the store holds it, in the order the listeners were added;
 * - a listener added with `replay` is first told every key cached at that moment (at that priority), so one that joins
 *   a watch already running misses nothing;
 * - the watches start once: `start` again does nothing until `stop`; `stopped` settles once every watch it started
 *   stopped (at once when it never started);
 * - the store is filled only by the watches (and by writes through clients given this store); it is emptied only by
 *   `stop`, never when `start`'s signal aborts.
 *
 * Assumptions: listeners are cheap and do not throw (they run inside the watch loop; wrap an operator's code).
 */
export class Informer {
  /** The cache, keyed `namespace/name` (see objectKey). */
  readonly store: Store;
  readonly #listeners = new Set<InformerListener>();
  readonly #watchers: Watcher[] = [];
  #stopped: Promise<void> | undefined;
  /** Stops the watches of the current start (`stop`); aborted with `start`'s signal too. */
  #stop: AbortController | undefined;

  constructor(projection: Projection) {
    this.store = new Store(projection);
  }

  /** What the store keeps of each object; handlers share an informer only when they share the projection. */
  get projection(): Projection {
    return this.store.projection;
  }

  /** The watches started, for health snapshots; empty until `start`. */
  get watchers(): readonly Watcher[] {
    return this.#watchers;
  }

  /** Whether `start` was called: its watches run (or ran). */
  get started(): boolean {
    return this.#stopped !== undefined;
  }

  /** Settles once every watch stopped after its signal aborted; at once when the informer never started. */
  get stopped(): Promise<void> {
    return this.#stopped ?? Promise.resolve();
  }

  /**
   * Tells `listener` every later change; with `replay`, first every key cached now, at that priority (nothing when the
   * store is empty). Adding a listener twice adds it once.
   */
  addListener(listener: InformerListener, replay?: QueuePriority): void {
    this.#listeners.add(listener);
    if (replay && this.store.size) listener([...this.store.keys()], replay);
  }

  /** Starts the watches `make` builds for this store until `signal` aborts or `stop`; does nothing once started. */
  start(make: WatchFactory, signal: AbortSignal): void {
    if (this.#stopped) return;
    const fanOut: InformerListener = (keys, priority) => {
      for (const listener of this.#listeners) listener(keys, priority);
    };
    const stop = this.#stop = new AbortController();
    const until = AbortSignal.any([signal, stop.signal]);
    this.#watchers.push(...make(this.store, fanOut));
    this.#stopped = Promise.all(this.#watchers.map((w) => w.start(until))).then(() => {});
  }

  /**
   * Stops the watches and empties the store (also of what a list still stored while stopping, unless a new `start`
   * came first), so the informer is as new: `start` builds its watches afresh. Listeners stay. Settles once the
   * stopped watches did.
   */
  stop(): Promise<void> {
    const stopped = this.#stopped;
    if (!stopped) return Promise.resolve();
    this.#stop?.abort();
    this.#stop = undefined;
    this.#stopped = undefined;
    this.#watchers.length = 0;
    this.store.clear();
    return stopped.then(() => {
      if (!this.#stopped) this.store.clear();
    });
  }
}

// One resource's cache in one cluster: its store, the watches that keep it current, and the fan-out of what changed.

import type { QueuePriority, Request } from "../../queue/mod.ts";
import type { ObjectRef } from "../resource_client.ts";
import { type Projection, Store, type StoredObject, trimObject } from "./store.ts";
import type { Watcher } from "./watcher.ts";

/**
 * Told the objects that changed, as requests of the informer's cluster, at `priority` (`low` from a list, a relist or a
 * replay; `live` from a watch event). The requests are shared by every listener: never modified.
 */
export type InformerListener = (requests: readonly Request[], priority: QueuePriority) => void;

/** Makes the watches that fill `store`, each reporting the store keys it changed to `onChange` (one per namespace, say). */
export type WatchFactory = (store: Store, onChange: (keys: string[], priority: QueuePriority) => void) => Watcher[];

/** What an informer caches and how it watches. */
export interface InformerOptions {
  /** The cluster watched: the `cluster` of every request its listeners are told. */
  cluster: string;
  /** What the store keeps of each object. Default: trimObject. */
  projection?: Projection;
  /** Builds its watches (on first use: `watchers` or `start`; afresh after `stop`). */
  watches: WatchFactory;
}

/**
 * One resource's watch and cache in one cluster, shared by every handler of that resource and projection (what
 * client-go calls a shared informer).
 *
 * Every Store and Watcher of the hub come together here: an engaged cluster's operators, their other watched resources,
 * the cluster providers and the shard Lease watch each use an informer.
 *
 * Guarantees:
 * - every listener is told every change, after the store holds it, in the order the listeners were added, as one
 *   array of Requests (built once per change from the store keys, whatever the number of listeners);
 * - a listener added with `replay` is first told every key cached at that moment (at that priority), so one that joins
 *   a watch already running misses nothing;
 * - the watches are built on first use (`watchers` or `start`, so an informer never used holds none; their snapshots
 *   read `connecting` until started) and start once: `start` again does nothing until `stop`; `stopped` settles once
 *   every watch it started stopped (at once when it never started);
 * - the store is filled only by the watches (and by writes through clients given this store); it is emptied only by
 *   `stop`, never when `start`'s signal aborts.
 *
 * Assumptions: listeners are cheap and do not throw (they run inside the watch loop; wrap an operator's code).
 */
export class Informer {
  /** The cluster watched; every request told names it. */
  readonly cluster: string;
  /** The cache, keyed `namespace/name` (see objectKey). */
  readonly store: Store;
  readonly #listeners = new Set<InformerListener>();
  readonly #make: WatchFactory;
  readonly #watchers: Watcher[] = [];
  /** Whether `#watchers` holds this start's watches: they are built on first use, so one never used costs none. */
  #built = false;
  #stopped: Promise<void> | undefined;
  /** Stops the watches of the current start (`stop`); aborted with `start`'s signal too. */
  #stop: AbortController | undefined;

  constructor(options: InformerOptions) {
    this.cluster = options.cluster;
    this.store = new Store(options.projection ?? trimObject);
    this.#make = options.watches;
  }

  /** What the store keeps of each object; handlers share an informer only when they share the projection. */
  get projection(): Projection {
    return this.store.projection;
  }

  /** Its watches, for health snapshots (`connecting` until started). */
  get watchers(): readonly Watcher[] {
    this.#build();
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

  /** The cached object `ref` (a Request, say) names, or undefined. */
  cached(ref: ObjectRef): StoredObject | undefined {
    return this.store.getRef(ref);
  }

  /** Every object cached now, as requests. */
  requests(): Request[] {
    return this.#requests([...this.store.keys()]);
  }

  /**
   * Tells `listener` every later change; with `replay`, first every object cached now, at that priority (nothing when
   * the store is empty). Adding a listener twice adds it once.
   */
  addListener(listener: InformerListener, replay?: QueuePriority): void {
    this.#listeners.add(listener);
    if (replay && this.store.size) listener(this.requests(), replay);
  }

  /** Starts the watches until `signal` aborts or `stop`; does nothing once started. */
  start(signal: AbortSignal): void {
    if (this.#stopped) return;
    const stop = this.#stop = new AbortController();
    // One listener, not AbortSignal.any: that keeps a signal, three Sets and weak references per informer, for hours.
    const follow = () => stop.abort(signal.reason);
    if (signal.aborted) follow();
    else signal.addEventListener("abort", follow, { once: true });
    this.#build();
    this.#stopped = Promise.all(this.#watchers.map((w) => w.start(stop.signal))).then(() =>
      signal.removeEventListener("abort", follow)
    );
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
    this.#built = false;
    this.store.clear();
    return stopped.then(() => {
      if (!this.#stopped) this.store.clear();
    });
  }

  /** Builds the watches into `#watchers` once per start; what they change reaches every listener as requests. */
  #build(): void {
    if (this.#built) return;
    this.#built = true;
    this.#watchers.push(...this.#make(this.store, (keys, priority) => {
      const requests = this.#requests(keys);
      for (const listener of this.#listeners) listener(requests, priority);
    }));
  }

  #requests(keys: string[]): Request[] {
    const { cluster, store } = this;
    return keys.map((key) => store.requestOf(cluster, key));
  }
}

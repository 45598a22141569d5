// The watches of one cluster: one per namespace watched, and an operator's other watched resources mapped to requests.

import { type KubeClient, resourcePath, type ResourceType } from "../../kube/mod.ts";
import type { NamespacedName, QueuePriority } from "../../queue/mod.ts";
import {
  type ListWatchClient,
  metadataOnlyClient,
  metadataProjection,
  objectMeta,
  type Operator,
  type Projection,
  type Request,
  Store,
  type StoredObject,
  trimObject,
  type WatchedResource,
  Watcher,
} from "../../runtime/mod.ts";
import type { Clock, Logger } from "../../util/mod.ts";

/** The cluster a watch runs in. */
export interface WatchContext {
  /** The cluster's name, as map functions see it. */
  cluster: string;
  client: KubeClient;
  /** The namespaces watched; empty means all. A resource that is not namespaced is watched cluster-wide. */
  namespaces: readonly string[];
  clock: Clock;
  log: Logger;
  idleTimeoutMs?: number;
  pageSize?: number;
}

/**
 * The watchers of `type` into `store`, one per namespace watched (one cluster-wide without namespaces); with
 * `metadataOnly`, listing and watching PartialObjectMetadata (see WatchedResource.metadataOnly).
 */
export function scopedWatchers(
  type: ResourceType,
  store: Store,
  onChange: (keys: string[], priority: QueuePriority) => void,
  ctx: WatchContext,
  labelSelector?: string,
  metadataOnly = false,
): Watcher[] {
  const { group, version, plural } = type;
  const query = labelSelector ? `?labelSelector=${encodeURIComponent(labelSelector)}` : "";
  const scopes = ctx.namespaces.length && type.namespaced !== false ? ctx.namespaces : [undefined];
  return scopes.map((namespace) =>
    new Watcher({
      path: resourcePath({ group, version, plural, namespace }) + query,
      namespace,
      client: watchClient(ctx.client, metadataOnly),
      store,
      onChange,
      clock: ctx.clock,
      // Named, so the lines of one watch's retries are told from another's (e.g. an operator's watched resources).
      logger: ctx.log.child({ resource: plural }),
      idleTimeoutMs: ctx.idleTimeoutMs,
      pageSize: ctx.pageSize,
    })
  );
}

/** What the watches of an operator's other resources need besides the cluster. */
export interface OtherWatchesOptions {
  /** The operator's own cached objects in any engaged cluster ([] for one not engaged). */
  cached(cluster: string): StoredObject[];
  /** Queues the operator's objects `requests` name, each in its own cluster, at `priority` (see FairWorkQueue). */
  queue(requests: readonly Request[], priority: QueuePriority): void;
}

/** The watches of an operator's other resources in one cluster (see watchOtherResources). */
export interface OtherWatches {
  /** Every watcher running now (per-object watches come and go: the array is kept up to date in place). */
  watchers: Watcher[];
  /** Settle once `signal` aborted and every watcher stopped. */
  runs: Promise<void>[];
  /** Re-evaluates the per-object watches (WatchedResource.objects): call it when the operator's objects changed. */
  refresh(): void;
}

/**
 * Starts the watches of `op`'s other watched resources (see WatchedResource) that accept this cluster.
 *
 * Guarantees: a watch with `objects` runs one watch per object it names (by `fieldSelector=metadata.name`, in the
 * object's namespace, each with a store of its own), started and stopped by `refresh`, so nothing else of that
 * resource is ever listed or cached; a stopped one's store is dropped.
 */
export function watchOtherResources(
  op: Operator,
  ctx: WatchContext,
  options: OtherWatchesOptions,
  signal: AbortSignal,
): OtherWatches {
  const watchers: Watcher[] = [];
  const runs: Promise<void>[] = [];
  const perObject: PerObjectWatches[] = [];
  for (const w of op.watches ?? []) {
    if (w.clusters && !w.clusters(ctx.cluster)) continue;
    if (w.objects) {
      const set = new PerObjectWatches(w, op.name, ctx, options, signal, watchers);
      perObject.push(set);
      runs.push(set.stopped);
      continue;
    }
    const store = new Store(watchProjection(w));
    const map = requestMapper(w, store, op.name, ctx, options.cached);
    const scoped = w.namespaces ? { ...ctx, namespaces: w.namespaces } : ctx;
    const started = scopedWatchers(
      w.type,
      store,
      (keys, priority) => options.queue(map(keys), priority),
      scoped,
      w.labelSelector,
      w.metadataOnly,
    );
    watchers.push(...started);
    runs.push(...started.map((watcher) => watcher.start(signal)));
  }
  const refresh = () => {
    for (const set of perObject) set.refresh();
  };
  refresh();
  return { watchers, runs, refresh };
}

/** One WatchedResource with `objects`: a watch per named object, kept in line with what `objects` returns. */
class PerObjectWatches {
  readonly stopped: Promise<void>;
  readonly #w: WatchedResource;
  readonly #operator: string;
  readonly #ctx: WatchContext;
  readonly #options: OtherWatchesOptions;
  readonly #signal: AbortSignal;
  readonly #watchers: Watcher[];
  readonly #running = new Map<string, { watcher: Watcher; stop: AbortController }>();
  /** Every watch run not settled yet, those already stopped by `refresh` included. */
  readonly #runs = new Set<Promise<void>>();

  constructor(
    w: WatchedResource,
    operator: string,
    ctx: WatchContext,
    options: OtherWatchesOptions,
    signal: AbortSignal,
    watchers: Watcher[],
  ) {
    this.#w = w;
    this.#operator = operator;
    this.#ctx = ctx;
    this.#options = options;
    this.#signal = signal;
    this.#watchers = watchers;
    this.stopped = new Promise<void>((resolve) => {
      const done = () => Promise.all(this.#runs).then(() => resolve());
      if (signal.aborted) done();
      else signal.addEventListener("abort", done, { once: true });
    });
  }

  refresh(): void {
    if (this.#signal.aborted) return;
    let wanted: Map<string, { namespace: string; name: string }>;
    try {
      wanted = new Map(this.#w.objects!(this.#options.cached).map((o) => [`${o.namespace}/${o.name}`, o]));
    } catch (err) {
      this.#ctx.log.error("watch objects function failed", { operator: this.#operator, error: err });
      return;
    }
    for (const [key, entry] of this.#running) {
      if (wanted.has(key)) continue;
      entry.stop.abort();
      this.#running.delete(key);
      this.#watchers.splice(this.#watchers.indexOf(entry.watcher), 1);
    }
    for (const [key, ref] of wanted) {
      if (this.#running.has(key)) continue;
      const store = new Store(watchProjection(this.#w));
      const map = requestMapper(this.#w, store, this.#operator, this.#ctx, this.#options.cached);
      const { group, version, plural } = this.#w.type;
      const selector = `fieldSelector=${encodeURIComponent(`metadata.name=${ref.name}`)}` +
        (this.#w.labelSelector ? `&labelSelector=${encodeURIComponent(this.#w.labelSelector)}` : "");
      const watcher = new Watcher({
        path: `${resourcePath({ group, version, plural, namespace: ref.namespace })}?${selector}`,
        namespace: ref.namespace,
        client: watchClient(this.#ctx.client, this.#w.metadataOnly),
        store,
        onChange: (keys, priority) => this.#options.queue(map(keys), priority),
        clock: this.#ctx.clock,
        logger: this.#ctx.log.child({ resource: plural, namespace: ref.namespace, name: ref.name }),
        idleTimeoutMs: this.#ctx.idleTimeoutMs,
        pageSize: this.#ctx.pageSize,
      });
      const stop = new AbortController();
      const onAbort = () => stop.abort();
      this.#signal.addEventListener("abort", onAbort, { once: true });
      const run: Promise<void> = watcher.start(stop.signal).finally(() => {
        this.#signal.removeEventListener("abort", onAbort);
        this.#runs.delete(run);
      });
      this.#runs.add(run);
      this.#running.set(key, { watcher, stop });
      this.#watchers.push(watcher);
    }
  }
}

/**
 * Maps changed keys of a watched resource's `store` to the operator's requests.
 *
 * Guarantees: the requests a key mapped to before are returned again with what it maps to now (so an object that
 * stopped naming a target still gets that target reconciled once, and a deleted object its last targets); a map
 * function that throws is logged and counts as mapping to nothing.
 */
export function requestMapper(
  w: WatchedResource,
  store: Store,
  operator: string,
  ctx: Pick<WatchContext, "cluster" | "log">,
  cached: (cluster: string) => StoredObject[],
): (keys: string[]) => Request[] {
  const last = new Map<string, Request[]>();
  return (keys) => {
    const requests: Request[] = [];
    for (const key of keys) {
      const obj = store.get(key);
      const before = last.get(key) ?? [];
      let now: Request[] = [];
      try {
        now = obj ? w.map(obj, ctx.cluster, cached) : [];
      } catch (err) {
        ctx.log.error("watch map function failed", { operator, key, error: err });
      }
      if (now.length) last.set(key, now);
      else last.delete(key);
      requests.push(...before, ...now);
    }
    return requests;
  };
}

/**
 * Requests grouped by cluster, in the order first seen, each as its namespace and name (typed all the way to the
 * queue, which drops a repeat of a key already queued).
 */
export function requestsByCluster(requests: readonly Request[]): Map<string, NamespacedName[]> {
  const byCluster = new Map<string, NamespacedName[]>();
  for (const r of requests) {
    let named = byCluster.get(r.cluster);
    if (!named) byCluster.set(r.cluster, named = []);
    named.push({ namespace: r.namespace, name: r.name });
  }
  return byCluster;
}

/** What the store of watched resource `w` keeps: its projection of the PartialObjectMetadata when metadata-only. */
function watchProjection(w: WatchedResource): Projection {
  if (w.metadataOnly) return metadataProjection(w.project);
  return w.project ?? metadataOnly;
}

/** The client a watch lists and watches through: asking for PartialObjectMetadata when metadata-only. */
function watchClient(client: KubeClient, metadataOnly = false): ListWatchClient {
  return metadataOnly ? metadataOnlyClient(client) : client;
}

/** Keeps labels and annotations too, which map functions of watched resources read. */
export function metadataOnly(raw: Record<string, unknown>): StoredObject {
  return { ...trimObject(raw), metadata: objectMeta(raw, { labels: true }) };
}

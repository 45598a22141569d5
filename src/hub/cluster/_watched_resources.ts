// The watches of one cluster: one per namespace watched, and an operator's other watched resources mapped to requests.

import { type KubeClient, resourcePath, type ResourceType } from "../../kube/mod.ts";
import type { QueuePriority } from "../../queue/mod.ts";
import {
  Informer,
  type ListWatchClient,
  metadataOnlyClient,
  metadataProjection,
  objectKey,
  objectMeta,
  type Operator,
  type Projection,
  type Request,
  type Store,
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
  onSynced?: () => void,
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
      onSynced,
    })
  );
}

/** What the watches of an operator's other resources need besides the cluster. */
export interface OtherWatchesOptions {
  /** The operator's own cached objects in any engaged cluster ([] for one not engaged). */
  cached(cluster: string): StoredObject[];
  /** How many objects `cached(cluster)` would list, without the copy. */
  count(cluster: string): number;
  /** Queues the operator's objects `requests` name, each in its own cluster, at `priority` (see FairWorkQueue). */
  queue(requests: readonly Request[], priority: QueuePriority): void;
  /** The operator's objects that act on this cluster: queued when a watch with `neededIn` has started here. */
  actingHere(): Request[];
}

/** The watches of an operator's other resources in one cluster (see watchOtherResources). */
export interface OtherWatches {
  /** Every watcher running now (per-object watches come and go: the array is kept up to date in place). */
  watchers: Watcher[];
  /** Settle once `signal` aborted and every watcher stopped. */
  runs: Promise<void>[];
  /**
   * Re-evaluates the per-object watches (WatchedResource.objects) and the watches run only where needed
   * (WatchedResource.neededIn): call it when the operator's objects changed.
   */
  refresh(): void;
}

/**
 * Starts the watches of `op`'s other watched resources (see WatchedResource) that accept this cluster.
 *
 * Guarantees: a watch with `objects` runs one watch per object it names (by `fieldSelector=metadata.name`, in the
 * object's namespace, each with a store of its own), started and stopped by `refresh`, so nothing else of that
 * resource is ever listed or cached; a stopped one's store is dropped. A watch with `neededIn` runs only while it
 * returns true for this cluster (started and stopped by `refresh`, its store dropped when stopped); once a start's
 * first list is in, `actingHere()` is queued (low).
 */
export function watchOtherResources(
  op: Operator,
  ctx: WatchContext,
  options: OtherWatchesOptions,
  signal: AbortSignal,
): OtherWatches {
  const watchers: Watcher[] = [];
  const runs: Promise<void>[] = [];
  const refreshed: RefreshedWatches[] = [];
  const shared: RefreshedContext = { operator: op.name, ctx, options, signal, watchers, live: undefined };
  for (const w of op.watches ?? []) {
    if (w.clusters && !w.clusters(ctx.cluster)) continue;
    if (w.objects || w.neededIn) {
      const Kind = w.objects ? PerObjectWatches : NeededWatch;
      refreshed.push(new Kind(w, shared));
      continue;
    }
    const informer = wholeInformer(w, ctx);
    const map = requestMapper(w, informer, op.name, ctx, options.cached);
    informer.addListener((requests, priority) => options.queue(map(requests), priority));
    watchers.push(...informer.watchers);
    informer.start(signal);
    runs.push(informer.stopped);
  }
  if (refreshed.length) runs.push(settledAfter(shared));
  const refresh = () => {
    for (const r of refreshed) r.refresh();
  };
  refresh();
  return { watchers, runs, refresh };
}

/** The informer of watched resource `w` in this cluster: all its objects (by its label selector), in its namespaces. */
function wholeInformer(w: WatchedResource, ctx: WatchContext, onSynced?: () => void): Informer {
  const scoped = w.namespaces ? { ...ctx, namespaces: w.namespaces } : ctx;
  return new Informer({
    cluster: ctx.cluster,
    projection: watchProjection(w),
    watches: (store, onChange) =>
      scopedWatchers(w.type, store, onChange, scoped, w.labelSelector, w.metadataOnly, onSynced),
  });
}

/** What the refreshed watches of one operator in one cluster share (one object, not a copy per watched resource). */
interface RefreshedContext {
  readonly operator: string;
  readonly ctx: WatchContext;
  readonly options: OtherWatchesOptions;
  readonly signal: AbortSignal;
  /** The cluster's live list of watchers, which health reads. */
  readonly watchers: Watcher[];
  /**
   * Every run not settled yet, those already stopped by `refresh` included (see settledAfter); made with the first
   * run, since most of these watches never run in most clusters.
   */
  live: Set<Promise<void>> | undefined;
}

/** Settles once `r.signal` aborted and every run in `r.live` then settled (none starts after the abort). */
function settledAfter(r: RefreshedContext): Promise<void> {
  return new Promise<void>((resolve) => {
    const done = () => Promise.all(r.live ?? []).then(() => resolve());
    if (r.signal.aborted) done();
    else r.signal.addEventListener("abort", done, { once: true });
  });
}

/** Watches of one WatchedResource that `refresh` starts and stops, each informer's changes mapped to requests. */
abstract class RefreshedWatches {
  protected readonly w: WatchedResource;
  protected readonly r: RefreshedContext;

  constructor(w: WatchedResource, r: RefreshedContext) {
    this.w = w;
    this.r = r;
  }

  abstract refresh(): void;

  /** Starts `informer`, its changes mapped to the operator's requests; returns its watchers (now in the live list). */
  protected run(informer: Informer): Watcher[] {
    const { operator, ctx, options } = this.r;
    const live = this.r.live ??= new Set();
    const map = requestMapper(this.w, informer, operator, ctx, options.cached);
    informer.addListener((requests, priority) => options.queue(map(requests), priority));
    const watchers = [...informer.watchers];
    this.r.watchers.push(...watchers);
    informer.start(this.r.signal);
    const run: Promise<void> = informer.stopped.finally(() => live.delete(run));
    live.add(run);
    return watchers;
  }

  /** Stops `informer` (its store emptied and dropped with it) and takes its watchers out of the live list. */
  protected drop(informer: Informer, watchers: readonly Watcher[]): void {
    const list = this.r.watchers;
    for (const watcher of watchers) list.splice(list.indexOf(watcher), 1);
    informer.stop();
  }
}

/** One WatchedResource with `neededIn`: its watch runs here only while the operator's objects need it here. */
class NeededWatch extends RefreshedWatches {
  #running: { informer: Informer; watchers: readonly Watcher[] } | undefined;

  refresh(): void {
    const { ctx, options, signal, operator } = this.r;
    if (signal.aborted) return;
    let needed: boolean;
    try {
      needed = this.w.neededIn!(ctx.cluster, options.cached, options.count);
    } catch (err) {
      // A throwing predicate keeps the watch as it is: never a missed change because of an operator's mistake.
      ctx.log.error("watch neededIn function failed", { operator, error: err });
      return;
    }
    if (needed === !!this.#running) return;
    if (!needed) {
      const { informer, watchers } = this.#running!;
      this.#running = undefined;
      this.drop(informer, watchers);
      return;
    }
    let first = true;
    const informer = wholeInformer(this.w, ctx, () => {
      // Once the first list is in: what acts here is queued, so a change made before it is seen by its reconcile.
      if (!first || this.#running?.informer !== informer) return;
      first = false;
      options.queue(options.actingHere(), "low");
    });
    this.#running = { informer, watchers: [] };
    this.#running.watchers = this.run(informer);
  }
}

/** One WatchedResource with `objects`: a watch per named object, kept in line with what `objects` returns. */
class PerObjectWatches extends RefreshedWatches {
  readonly #running = new Map<string, { watchers: readonly Watcher[]; informer: Informer }>();

  refresh(): void {
    const { ctx, options, signal, operator } = this.r;
    if (signal.aborted) return;
    let wanted: Map<string, { namespace: string; name: string }>;
    try {
      wanted = new Map(this.w.objects!(options.cached).map((o) => [`${o.namespace}/${o.name}`, o]));
    } catch (err) {
      ctx.log.error("watch objects function failed", { operator, error: err });
      return;
    }
    for (const [key, entry] of this.#running) {
      if (wanted.has(key)) continue;
      this.#running.delete(key);
      this.drop(entry.informer, entry.watchers);
    }
    for (const [key, ref] of wanted) {
      if (this.#running.has(key)) continue;
      const { group, version, plural } = this.w.type;
      const selector = `fieldSelector=${encodeURIComponent(`metadata.name=${ref.name}`)}` +
        (this.w.labelSelector ? `&labelSelector=${encodeURIComponent(this.w.labelSelector)}` : "");
      const informer = new Informer({
        cluster: ctx.cluster,
        projection: watchProjection(this.w),
        watches: (store, onChange) => [
          new Watcher({
            path: `${resourcePath({ group, version, plural, namespace: ref.namespace })}?${selector}`,
            namespace: ref.namespace,
            client: watchClient(ctx.client, this.w.metadataOnly),
            store,
            onChange,
            clock: ctx.clock,
            logger: ctx.log.child({ resource: plural, namespace: ref.namespace, name: ref.name }),
            idleTimeoutMs: ctx.idleTimeoutMs,
            pageSize: ctx.pageSize,
          }),
        ],
      });
      this.#running.set(key, { informer, watchers: this.run(informer) });
    }
  }
}

/**
 * Maps changed objects of a watched resource (told by its informer) to the operator's requests.
 *
 * Guarantees: the requests an object mapped to before are returned again with what it maps to now (so an object that
 * stopped naming a target still gets that target reconciled once, and a deleted object its last targets); a map
 * function that throws is logged and counts as mapping to nothing.
 */
export function requestMapper(
  w: WatchedResource,
  informer: Pick<Informer, "cached">,
  operator: string,
  ctx: Pick<WatchContext, "cluster" | "log">,
  cached: (cluster: string) => StoredObject[],
): (changed: readonly Request[]) => Request[] {
  const last = new Map<string, Request[]>();
  return (changed) => {
    const requests: Request[] = [];
    for (const r of changed) {
      const obj = informer.cached(r);
      const key = objectKey(r);
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

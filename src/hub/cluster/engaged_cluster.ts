// One engaged cluster: its client, and per operator its pre-flight, watch (shared per resource) and health.

import { type ClusterAccess, KubeClient, type ResourceType, rulesReview } from "../../kube/mod.ts";
import type { QueuePriority } from "../../queue/mod.ts";
import {
  type ApiClient,
  type ClusterConnection,
  EventRecorder,
  type Informer,
  type Operator,
  type ReconcileTarget,
  type Request,
  type StoredObject,
  type TaskSet,
  trimObject,
  type WatchPhase,
} from "../../runtime/mod.ts";
import { type Clock, type Logger, SystemClock } from "../../util/mod.ts";
import { budgeted } from "./_budgeted_api.ts";
import { ClusterClients } from "./_cluster_clients.ts";
import { contactHealth, type FirstContact, type Slot, slotsHealth } from "./_cluster_slot.ts";
import type { ClusterHealth } from "../health/cluster_health.ts";
import { FirstRulesReview } from "./_first_rules.ts";
import { preflight, type PreflightContext } from "./_preflight.ts";
import { reach, type ReachContext } from "./_reach.ts";
import { type WatchContext, watchOtherResources } from "./_watched_resources.ts";
import { joinWatch, type SlotWiring, wireSlot } from "./watch_to_queue.ts";
import type { EngagedClusterOptions } from "./engaged_cluster_options.ts";

/**
 * Runs everything one cluster needs, for every operator of the hub.
 *
 * Guarantees:
 * - `start` settles only after every watcher stopped and the HTTP client is closed, so a disengaged
 *   cluster leaves no socket or timer behind;
 * - nothing per operator exists or runs before the server answered once (`GET /version`, any HTTP status): until then
 *   each operator shows the first contact's state, `target` and `connection` are undefined, and a cluster that never
 *   answers costs its client and one request per backoff step;
 * - failures never escape: they become the state of the operator they concern (a missing CRD, a
 *   missing permission) and are retried with backoff, so one operator's trouble never stops another,
 *   and one bad cluster never affects another;
 * - operators of the same resource and projection share one watch and one cache;
 * - an operator whose `resourceClusters` refuses this cluster has no discovery, pre-flight or watch of its own
 *   resource here (so a cluster without its CRD is not `missing-crd` for its sake): its `uses` and `watches` are
 *   checked, its `watches` run, and its health here is theirs.
 */
export class EngagedCluster {
  readonly name: string;
  readonly #o: EngagedClusterOptions;
  readonly #clock: Clock;
  readonly #access: ClusterAccess;
  readonly #client: KubeClient;
  readonly #api: ApiClient;
  /** Builds every resource client and event sink of this cluster. */
  #clients: ClusterClients | undefined;
  readonly #log: Logger;
  /** The one namespace of a namespaced cluster (see ClusterAccess.namespaceScope), else undefined. */
  readonly #scope: string | undefined;
  /** The namespaces listed, watched and checked here; empty means all. */
  readonly #namespaces: readonly string[];
  readonly #slots = new Map<string, Slot>();
  readonly #informers = new Map<string, Informer>();
  /** The watches of operators' other watched resources (see WatchedResource), until they stop. */
  readonly #otherRuns: Promise<void>[] = [];
  /** Each operator's re-evaluation of its watches here (see refreshWatches). */
  readonly #refreshers = new Map<string, () => void>();
  /** Operators whose peers' watches are due a re-evaluation (see #refreshPeers). */
  #peersDue: Set<string> | undefined;
  /**
   * The rules review of the one namespace checked here (a namespaced cluster's, or the only one watched), shared by
   * its operators' first pre-flight attempts.
   */
  readonly #firstRules: { namespace: string; firstRules: FirstRulesReview } | undefined;
  /** The informers whose watch runs early, before any of their operators passed pre-flight (see #run). */
  #early: Set<Informer> | undefined;
  /** Per operator: its background tasks here (daemons), closed whenever this replica stops reconciling here. */
  readonly #tasks = new Map<string, TaskSet>();
  /** False while this replica does not reconcile here (stopBackground until openBackground). */
  #background = true;
  /** Where the first contact stands until the server answered (see #reachContext), and its failed attempts. */
  #contact: FirstContact = { state: "registering", error: null, attempts: 0 };

  constructor(name: string, access: ClusterAccess, options: EngagedClusterOptions) {
    this.name = name;
    this.#o = options;
    this.#clock = options.clock ?? new SystemClock();
    this.#access = access;
    this.#log = options.logger.child({ cluster: name });
    this.#scope = access.namespaceScope;
    this.#namespaces = this.#scope ? [this.#scope] : options.namespaces;
    this.#client = new KubeClient(access, {
      clock: this.#clock,
      requestTimeoutMs: options.requestTimeoutMs,
      maxObjectBytes: options.maxObjectBytes,
      onResponse: options.onResponse,
      logger: this.#log,
      userAgent: "operator-hub",
      http2: options.http2,
      fetch: options.fetch,
    });
    this.#api = budgeted(this.#client, options.apiBudget);
    // The slots (and their clients) are built once the server answered (see #build): until then a cluster is its
    // client and its first contact's state, nothing per operator.
    // One rules review answers the checks of one namespace (those it does not allow are still asked one by one).
    const scope = this.#namespaces.length === 1 ? this.#namespaces[0] : undefined;
    this.#firstRules = scope
      ? {
        namespace: scope,
        firstRules: new FirstRulesReview(
          (signal) => rulesReview(this.#client, scope, signal),
          new Set(options.operators.map((o) => o.name)).size,
        ),
      }
      : undefined;
  }

  /** What reconciles `operator`'s objects here; undefined for an operator this hub does not host. */
  target(operator: string): ReconcileTarget | undefined {
    return this.#slots.get(operator)?.target;
  }

  /** Every cached object of every operator that passed pre-flight, filtered by its pre-check, handed to `onChange` (low). */
  requeueAll(): void {
    for (const slot of this.#slots.values()) if (!slot.preflight) slot.changed(slot.informer.requests(), "low");
  }

  /** This cluster as `operator`'s reconciles see it from another cluster: clients for what it declared. */
  connection(operator: string, signal: AbortSignal): ClusterConnection | undefined {
    const slot = this.#slots.get(operator);
    if (!slot) return undefined;
    return {
      name: this.name,
      client: <U extends StoredObject>(type?: ResourceType) => {
        if (!type || sameType(type, slot.operator.resource)) return slot.target.client.withSignal(signal) as never;
        const use = slot.operator.uses.find((u) => sameType(u.type, type));
        return this.#clients!.resource<U>(
          { operator, type, verbs: use?.verbs ?? [], project: use?.project ?? trimObject },
          signal,
        ).client;
      },
    };
  }

  /** Re-evaluates `operator`'s watches here that run only where needed: its objects changed in some cluster. */
  refreshWatches(operator: string): void {
    this.#refreshers.get(operator)?.();
  }

  /** How many objects `cachedObjects(operator)` would list, without the copy. */
  cachedCount(operator: string): number {
    const slot = this.#slots.get(operator);
    return slot && !slot.preflight ? slot.informer.store.size : 0;
  }

  /** `operator`'s cached objects of its own resource in this cluster ([] for an operator it does not host). */
  cachedObjects(operator: string): StoredObject[] {
    const slot = this.#slots.get(operator);
    // Before its pre-flight passed, an operator's objects are not shown (its watch may run early: see #run).
    return slot && !slot.preflight
      ? [...slot.informer.store.keys()].map((k) => slot.informer.store.get(k)!).filter(Boolean)
      : [];
  }

  /**
   * Stops every operator's background tasks here (each within its grace period) and refuses new ones until
   * `openBackground`: this replica stopped reconciling here (paused, leadership lost, disengaged, stopping).
   */
  stopBackground(): Promise<void> {
    this.#background = false;
    return Promise.all([...this.#tasks.values()].map((t) => t.close())).then(() => {});
  }

  /** Accepts background tasks again (reconciling resumed here). */
  openBackground(): void {
    this.#background = true;
    for (const t of this.#tasks.values()) t.open();
  }

  /** Closes the cluster's client now: requests in flight fail, later ones too (Hub.disengage calls it). */
  closeClient(): void {
    this.#client.close();
  }

  /** Pre-flight per operator, then watch until `signal` aborts; closes the client before settling. */
  async start(signal: AbortSignal): Promise<void> {
    // Daemons are told at once, not after the watches wound down.
    let stopping: Promise<void> | undefined;
    const stopTasks = () => stopping ??= this.stopBackground();
    signal.addEventListener("abort", stopTasks, { once: true });
    try {
      // A server that never answers costs one request per backoff step here, not every operator's checks and list.
      if (!(await reach(this.#reachContext(), signal))) return;
      this.#build();
      await Promise.all([...this.#slots.values()].map((slot) => this.#run(slot, signal)));
      await Promise.all([...this.#informers.values()].map((i) => i.stopped));
      await Promise.all(this.#otherRuns);
    } finally {
      signal.removeEventListener("abort", stopTasks);
      await stopTasks();
      this.#forgetCaches();
      this.#client.close();
    }
  }

  /** Every operator's slot and the clients they use: once the server answered. */
  #build(): void {
    this.#clients = new ClusterClients(
      this.name,
      this.#api,
      new EventRecorder({
        api: this.#api,
        component: "operator-hub",
        minLevel: this.#o.eventLevel,
        clock: this.#clock,
        logger: this.#log,
      }),
    );
    const wiring: SlotWiring = {
      watch: this.#watchContext(),
      informers: this.#informers,
      clients: this.#clients,
      onChange: (operator, requests, priority) => this.#o.onChange(operator, requests, priority),
      lookup: (cluster) => this.#o.lookup(cluster),
      clusters: () => this.#o.clusterNames?.() ?? [this.name],
      checkReads: this.#o.checkReads,
    };
    for (const op of this.#o.operators) {
      const { slot, tasks } = wireSlot(op, wiring);
      this.#tasks.set(op.name, tasks);
      this.#slots.set(op.name, slot);
    }
    // Background tasks stopped before the slots existed (paused, not leading) stay stopped.
    if (!this.#background) { for (const t of this.#tasks.values()) t.close(); }
  }

  /** Tells every operator that observes its cache that this cluster's objects are gone. */
  #forgetCaches(): void {
    for (const slot of this.#slots.values()) {
      try {
        slot.operator.cacheObserver?.forget(this.name);
      } catch (err) {
        this.#log.error("cache observer failed", { operator: slot.operator.name, error: err });
      }
    }
  }

  /**
   * One operator: pre-flight until it passes, then join (or start) its resource's watch. The watch starts early, with
   * the first attempt (the checks cannot change what is listed), but nothing is queued, shown as cached to other
   * clusters or reconciled before a pre-flight passed; an attempt that fails stops it (its cache emptied) until then.
   */
  async #run(slot: Slot, signal: AbortSignal): Promise<void> {
    const ctx: PreflightContext = {
      ...this.#preflightContext(),
      onFirstAttempt: () => this.#watchEarly(slot, signal),
      onFailedAttempt: () => this.#stopEarly(slot.informer),
    };
    if (!(await preflight(slot, ctx, signal))) return;
    this.#early?.delete(slot.informer);
    this.#engaged(slot);
    if (!slot.owns) {
      slot.preflight = null;
      this.#watchOthers(slot, signal);
      return;
    }
    // Its cache observer, then its queue, join its resource's watch (watch_to_queue.ts), which starts if it did not.
    joinWatch(slot, this.#log, signal);
    this.#watchOthers(slot, signal);
  }

  /** The operator's first pre-flight attempt began: its resource's list starts now, unless its watch already runs. */
  #watchEarly(slot: Slot, signal: AbortSignal): void {
    if (!slot.owns || slot.informer.started || signal.aborted) return;
    (this.#early ??= new Set()).add(slot.informer);
    slot.informer.start(signal);
  }

  /** An attempt failed before any operator of `informer` passed: its early watch stops and its cache is emptied. */
  #stopEarly(informer: Informer): void {
    if (this.#early?.delete(informer)) this.#otherRuns.push(informer.stop());
  }

  /** The operator's objects that act on this cluster (its `onEngage`), queued in their clusters. */
  #engaged(slot: Slot): void {
    const op = slot.operator;
    if (!op.onEngage) return;
    // An operator's mistake costs only the early requeue, never the cluster's watches.
    this.#queueRequests(op.name, this.#onEngage(op, (c) => this.#o.lookup(c)?.cachedObjects(op.name) ?? []), "low");
  }

  /** What `op.onEngage` names for this cluster ([] without one, or when it throws: logged). */
  #onEngage(op: Operator, cached: (cluster: string) => StoredObject[]): Request[] {
    try {
      return op.onEngage?.(this.name, cached).map(({ cluster, namespace, name }) => ({ cluster, namespace, name })) ??
        [];
    } catch (err) {
      this.#log.error("onEngage failed", { operator: op.name, error: err });
      return [];
    }
  }

  /** Queues requests an operator's code made (`onEngage`, a watch's `map`): copied, so later changes of them are not. */
  #queueRequests(operator: string, requests: readonly Request[], priority: QueuePriority): void {
    if (!requests.length) return;
    this.#o.onChange(
      operator,
      requests.map(({ cluster, namespace, name }) => ({ cluster, namespace, name })),
      priority,
    );
  }

  /** The operator's other watched resources: each change is mapped to its own objects, queued in their cluster. */
  #watchOthers(slot: Slot, signal: AbortSignal): void {
    const op = slot.operator;
    const cached = (cluster: string) => this.#o.lookup(cluster)?.cachedObjects(op.name) ?? [];
    const { watchers, runs, refresh } = watchOtherResources(op, this.#watchContext(), {
      cached,
      count: (cluster) => this.#o.lookup(cluster)?.cachedCount?.(op.name) ?? 0,
      queue: (requests, priority) => this.#queueRequests(op.name, requests, priority),
      actingHere: () => [...(slot.owns ? slot.informer.requests() : []), ...this.#onEngage(op, cached)],
    }, signal);
    // Per-object watches follow the operator's own objects here (a Mirror naming its source); the array is live.
    slot.others = watchers;
    this.#refreshers.set(op.name, refresh);
    // Watches needed elsewhere by objects here (a Mirror's copies in its target clusters) are re-evaluated there too.
    const elsewhere = op.watches?.some((w) => w.neededIn && w.neededAcrossClusters) ?? false;
    if (slot.owns) slot.informer.addListener(elsewhere ? () => (refresh(), this.#refreshPeers(op.name)) : refresh);
    this.#otherRuns.push(...runs);
  }

  /**
   * Tells every other engaged cluster that `operator`'s objects here changed, once per burst (a microtask later), so
   * its watches run only where needed follow (a Mirror that starts or stops targeting a cluster).
   */
  #refreshPeers(operator: string): void {
    const due = this.#peersDue ??= new Set();
    if (due.has(operator)) return;
    due.add(operator);
    queueMicrotask(() => {
      due.delete(operator);
      for (const name of this.#o.clusterNames?.() ?? []) {
        if (name !== this.name) this.#o.lookup(name)?.refreshWatches?.(operator);
      }
    });
  }

  #watchContext(): WatchContext {
    return {
      cluster: this.name,
      client: this.#client,
      namespaces: this.#namespaces,
      clock: this.#clock,
      log: this.#log,
      idleTimeoutMs: this.#o.idleTimeoutMs,
      pageSize: this.#o.pageSize,
    };
  }

  /** The first contact: where it stands is every operator's pre-flight state here until the server answered. */
  #reachContext(): ReachContext {
    const onState = (state: WatchPhase, error: string | null) => {
      // `connecting` starts an attempt or says the server answered; any other state ends a failed attempt.
      const attempts = this.#contact.attempts + (state === "connecting" ? 0 : 1);
      this.#contact = { state, error, attempts };
    };
    const { server, proxyUrl } = this.#access;
    // An injected fetch is the whole network (tests' scripted servers): it alone says whether the server answers.
    const connect = this.#o.fetch ? () => Promise.resolve({ close() {} }) : undefined;
    const summary = this.#o.contactLog ? { burst: this.#o.contactLog, cluster: this.name } : undefined;
    return { client: this.#client, server, proxyUrl, connect, clock: this.#clock, log: this.#log, summary, onState };
  }

  #preflightContext(): PreflightContext {
    return {
      cluster: this.name,
      api: this.#api,
      client: this.#client,
      namespaces: this.#namespaces,
      scope: this.#firstRules,
      extraPermissions: this.#o.extraPermissions,
      gate: this.#o.preflightGate,
      clock: this.#clock,
      log: this.#log,
    };
  }

  /** The cluster's health; `queueDepth(operator)` and `queueTotal` come from the shared queue. */
  health(queueDepth: (operator: string) => number, queueTotal: number, wedgedAfterMs: number): ClusterHealth {
    const inputs = { now: this.#clock.now(), queueDepth, queueTotal, wedgedAfterMs };
    const h = this.#slots.size > 0 || this.#o.operators.length === 0
      ? slotsHealth(this.#slots, inputs)
      : contactHealth(this.#o.operators.map((o) => o.name), this.#contact, inputs);
    // The first contact's failed attempts count too, once the slots count theirs (contactHealth counts only them).
    if (this.#slots.size > 0) h.connectAttempts += this.#contact.attempts;
    return this.#scope ? { ...h, namespace: this.#scope } : h;
  }
}

function sameType(a: ResourceType, b: ResourceType): boolean {
  return a.group === b.group && a.version === b.version && a.plural === b.plural;
}

// One replica's side of sharding: its peer Lease, the fence Leases of the clusters it owns, and engage/disengage.

import client from "prom-client";
import { type ClusterAccess, httpStatusOf, KubeClient } from "../../kube/mod.ts";
import { type ListWatchClient, Store, type StoredObject, Watcher } from "../../runtime/mod.ts";
import { type Clock, errorText, type Logger, SystemClock } from "../../util/mod.ts";
import type { ClusterRegistration, RegistrationProblem } from "../hub.ts";
import { LeaseClient, type LeaseObject, type LeaseSpec, microTime } from "../leases.ts";
import type { EngageTarget } from "../providers/mod.ts";
import { fnv1a64 } from "./rendezvous.ts";
import {
  CLUSTER_ANNOTATION,
  GROUP_LABEL,
  ROLE_LABEL,
  SHARD_TIMING_DEFAULTS,
  ShardTable,
  type ShardTimings,
  WEIGHT_ANNOTATION,
} from "./shard_table.ts";

/** What the coordinator drives: the Hub (engage/disengage/hold, and pause/resume for `--shard-warm`). */
export interface ShardTarget extends EngageTarget {
  /** Stops reconciling in an engaged cluster (queue dropped, in-flight reconciles cancelled); watches go on. */
  pause(name: string): void;
  /** Reconciles in an engaged cluster again, queueing everything cached. */
  resume(name: string): void;
}

export interface ShardCoordinatorOptions {
  /** The home cluster, which holds the Leases. */
  home: ClusterAccess;
  /** The Leases' namespace in the home cluster. */
  namespace: string;
  /** `--shard-id`: the Leases' name prefix and group label; replicas of one group share clusters. */
  group: string;
  /** This replica's identity: hostname + "_" + a short random suffix. */
  identity: string;
  /** `--shard-weight`: this replica's relative share. Default 1. */
  weight?: number;
  /** `--shard-warm`: keep watching clusters owned elsewhere, with reconciles off. */
  warm?: boolean;
  timings?: Partial<ShardTimings>;
  /** Fences acquired or released at once. Default 32. */
  concurrency?: number;
  requestTimeoutMs?: number;
  http2?: boolean;
  clock?: Clock;
  logger: Logger;
}

/** A peer as /status shows it. */
export interface ShardPeer {
  identity: string;
  weight: number;
  live: boolean;
  self: boolean;
}

/** The `shard` section of /status. */
export interface ShardStatus {
  identity: string;
  weight: number;
  warm: boolean;
  /** `namespace` of the Leases in the home cluster, and the group. */
  leases: string;
  /** False while this replica's own peer Lease is not renewed (it reconciles nowhere then). */
  live: boolean;
  peers: ShardPeer[];
  /** Clusters this replica reconciles now. */
  owned: number;
  /** Registered clusters with no owner as seen from here. */
  unowned: number;
  registered: number;
  /** owned / registered (0 with none registered). */
  share: number;
  handoffs: { acquired: number; released: number };
  fenceViolations: number;
  leaseWrites: number;
  /** Fence operations in flight, and clusters still winding down after a hand-over. */
  pending: { fenceOps: number; teardowns: number };
  lastError: string | null;
  /** Every registered cluster's owner (a replica identity), or null. */
  clusters: Record<string, string | null>;
}

interface Registered {
  access: ClusterAccess;
  registration: ClusterRegistration;
}

/**
 * Shares the registered clusters among the replicas of a group, through Leases in the home cluster.
 *
 * Guarantees:
 * - every replica holds a peer Lease (`GROUP-peer-…`, renewed every peerRenewPeriod); each registered cluster's
 *   owner is its bounded-load rendezvous owner among the live peers (`boundedRendezvous`: the weighted rendezvous
 *   winner unless that peer is at its cap of ⌈n·w/W⌉ + 1), and it reconciles there only while it holds the
 *   cluster's fence Lease (`GROUP-fence-…`), which names it and is written only on acquire and release: its liveness
 *   is the holder's peer Lease, so coordination costs one write per replica per renew period plus one per handoff,
 *   whatever the number of clusters;
 * - a fence is taken only when free, or held by a replica whose peer Lease this replica saw unchanged for its whole
 *   duration on its own clock (or deleted that long ago), confirmed by a fresh read right before the write; the write
 *   carries the fence's resourceVersion, so two replicas never both take it; a live holder hands a fence over by
 *   freeing it, also one it no longer counts as its own after a lapse;
 * - a replica stops reconciling in a cluster (Hub.disengage: watches stopped, queue dropped, the cluster's client
 *   closed, so in-flight reconciles fail and nothing more is written; with `warm`, Hub.pause) as soon as it sees its
 *   fence taken, and, checked every quarter second, everywhere once its own peer Lease was not renewed for the renew
 *   deadline: before any other replica may count it dead;
 * - without `warm`, clusters owned elsewhere are not engaged here (no watch, no memory);
 * - on `start`'s signal it stops reconciling, then releases its fences and deletes its peer Lease, so the others
 *   take over at once; a replica killed is replaced once its peer Lease expired (lease duration + a renew period);
 * - a failing Lease request only delays that cluster's handoff; other clusters and replicas go on.
 *
 * Assumptions: see ShardTable (clock rates, not clock values, agree; a write sent before a deadline lands within the
 * margin). Writes a reconcile makes through another cluster's client (the Mirror operator's targets) are fenced by
 * that cluster's own owner only when it is the same replica.
 */
export class ShardCoordinator implements EngageTarget {
  readonly identity: string;
  readonly #o: ShardCoordinatorOptions;
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #table: ShardTable;
  readonly #client: KubeClient;
  readonly #leases: LeaseClient;
  /** The peer Lease's own client, so a renewal never queues behind fence writes or the Lease watch. */
  readonly #peerClient: KubeClient;
  readonly #peerLeases: LeaseClient;
  readonly #store = new Store(projectLease);
  readonly #watcher: Watcher;
  readonly #registered = new Map<string, Registered>();
  /** Clusters engaged in the target: owned ones, or every registered one with `warm`. */
  readonly #engaged = new Set<string>();
  /** Clusters reconciling in the target now. */
  readonly #reconciling = new Set<string>();
  readonly #busy = new Map<string, Promise<void>>();
  readonly #windingDown = new Set<Promise<void>>();
  #target: ShardTarget | undefined;
  #peerLease: LeaseObject | undefined;
  #startedAt = 0;
  #stopping = false;
  #kick: (() => void) | undefined;
  #lastError: string | null = null;
  #writes = 0;
  #acquired = 0;
  #released = 0;
  #violations = 0;

  constructor(options: ShardCoordinatorOptions) {
    this.#o = options;
    this.identity = options.identity;
    this.#clock = options.clock ?? new SystemClock();
    this.#log = options.logger.child({ cluster: options.home.name, shard: options.identity });
    const timings = { ...SHARD_TIMING_DEFAULTS, ...options.timings };
    this.#table = new ShardTable(options.identity, options.weight ?? 1, timings, this.#clock);
    this.#client = new KubeClient(options.home, {
      clock: this.#clock,
      requestTimeoutMs: Math.min(options.requestTimeoutMs ?? 30_000, timings.peerRenewDeadlineMs),
      logger: this.#log,
      userAgent: "operator-hub/shard",
      http2: options.http2,
    });
    this.#leases = new LeaseClient(this.#client, options.namespace);
    this.#peerClient = new KubeClient(options.home, {
      clock: this.#clock,
      requestTimeoutMs: timings.peerRenewDeadlineMs,
      logger: this.#log,
      userAgent: "operator-hub/shard-peer",
      http2: options.http2,
    });
    this.#peerLeases = new LeaseClient(this.#peerClient, options.namespace);
    const selector = `${GROUP_LABEL}=${options.group}`;
    const c = this.#client;
    const selected: ListWatchClient = {
      listPage: (path, opts) => c.listPage(path, { ...opts, labelSelector: selector }),
      watch: (path, opts) => c.watch(path, { ...opts, labelSelector: selector }),
      resetConnections: () => c.resetConnections(),
    };
    this.#watcher = new Watcher({
      path: this.#leases.collection,
      namespace: options.namespace,
      client: selected,
      store: this.#store,
      onChange: (keys) => this.#leasesChanged(keys),
      clock: this.#clock,
      logger: this.#log,
      // Bookmarks arrive about once a minute; a silent Lease watch delays takeovers, so reopen it sooner.
      idleTimeoutMs: 75_000,
    });
  }

  /** The Hub (or any ShardTarget) this coordinator engages clusters in; call before `start`. */
  connect(target: ShardTarget): void {
    this.#target = target;
  }

  /** A provider registered (or re-registered) a cluster: engaged here if and once this replica owns it. */
  async engage(name: string, access: ClusterAccess, registration: ClusterRegistration): Promise<void> {
    const again = this.#registered.has(name);
    this.#registered.set(name, { access, registration });
    this.#table.register(name);
    const t = this.#target!;
    if (this.#o.warm) {
      if (!this.#reconciling.has(name)) t.pause(name);
      this.#engaged.add(name);
      await t.engage(name, access, registration);
    } else if (again && this.#engaged.has(name)) {
      await t.engage(name, access, registration); // new endpoint: the owner re-engages with it
    }
    this.#kick?.();
  }

  /** A cluster was unregistered: disengaged here, its fence released if this replica held it. */
  async disengage(name: string): Promise<void> {
    this.#registered.delete(name);
    this.#table.unregister(name);
    await this.#run(name, () => this.#release(name, "unregistered"));
    if (this.#engaged.delete(name)) await this.#target!.disengage(name);
  }

  hold(name: string, problem: RegistrationProblem | undefined): void {
    this.#target!.hold(name, problem);
  }

  /** Who owns `cluster` as seen from here, or null. */
  owner(cluster: string): string | null {
    return this.#table.owner(cluster);
  }

  status(): ShardStatus {
    const clusters: Record<string, string | null> = {};
    let owned = 0;
    let unowned = 0;
    for (const name of [...this.#registered.keys()].sort()) {
      const o = this.#table.owner(name);
      clusters[name] = o;
      if (o === this.identity) owned++;
      if (o === null) unowned++;
    }
    const live = new Set(this.#table.livePeers().map((p) => p.identity));
    const peers: ShardPeer[] = [];
    for (const p of this.#peersSeen()) {
      peers.push({
        identity: p.identity,
        weight: p.weight,
        live: live.has(p.identity),
        self: p.identity === this.identity,
      });
    }
    const registered = this.#registered.size;
    return {
      identity: this.identity,
      weight: this.#table.weight,
      warm: this.#o.warm ?? false,
      leases: `${this.#o.namespace}/${this.#o.group}`,
      live: this.#table.selfLive(),
      peers,
      owned,
      unowned,
      registered,
      share: registered ? owned / registered : 0,
      handoffs: { acquired: this.#acquired, released: this.#released },
      fenceViolations: this.#violations,
      leaseWrites: this.#writes,
      pending: { fenceOps: this.#busy.size, teardowns: this.#windingDown.size },
      lastError: this.#lastError,
      clusters,
    };
  }

  /** Adds the `hub_shard_*` series to a Prometheus registry. */
  registerMetrics(registry: client.Registry): void {
    const status = () => this.status();
    const registers = [registry];
    new client.Gauge({
      name: "hub_shard_clusters_owned",
      help: "Registered clusters this replica owns (holds the fence of, and reconciles in)",
      registers,
      collect() {
        this.set(status().owned);
      },
    });
    new client.Gauge({
      name: "hub_shard_clusters_unowned",
      help: "Registered clusters no live replica owns, as seen from this replica",
      registers,
      collect() {
        this.set(status().unowned);
      },
    });
    new client.Gauge({
      name: "hub_shard_peers",
      help: "Live replicas of this shard group, this one included",
      registers,
      collect() {
        this.set(status().peers.filter((p) => p.live).length);
      },
    });
    new client.Counter({
      name: "hub_shard_handoffs_total",
      help: "Fences this replica acquired or released, by direction",
      labelNames: ["direction"],
      registers,
      collect() {
        const s = status();
        this.reset();
        this.inc({ direction: "acquired" }, s.handoffs.acquired);
        this.inc({ direction: "released" }, s.handoffs.released);
      },
    });
    new client.Counter({
      name: "hub_shard_fence_violations_total",
      help: "Fences found taken by another replica while this one still counted itself their holder (should be 0)",
      registers,
      collect() {
        this.reset();
        this.inc(status().fenceViolations);
      },
    });
    new client.Counter({
      name: "hub_shard_lease_writes_total",
      help: "Peer and fence Lease writes this replica sent successfully",
      registers,
      collect() {
        this.reset();
        this.inc(status().leaseWrites);
      },
    });
  }

  /** Runs until `signal` aborts; then hands everything over and settles. */
  async start(signal: AbortSignal): Promise<void> {
    if (!this.#target) throw new Error("ShardCoordinator.start: connect() a target first");
    this.#startedAt = this.#clock.now();
    this.#log.info("sharding started", {
      identity: this.identity,
      weight: this.#table.weight,
      leases: `${this.#o.namespace}/${this.#o.group}`,
      warm: this.#o.warm ?? false,
    });
    const inner = new AbortController();
    const watching = this.#watcher.start(inner.signal);
    const renewing = this.#renewLoop(signal);
    const guarding = this.#guardLoop(signal);
    const passing = this.#passLoop(signal);
    await Promise.all([renewing, guarding, passing]);
    // Graceful stop: the peer Lease goes first, so the others' hash already gives this replica's clusters to them; each
    // fence is then freed right after reconciling stopped there, and taken by its next owner on the spot.
    this.#stopping = true;
    await Promise.all([...this.#busy.values()]);
    const held = this.#table.heldClusters();
    await this.#deletePeerLease();
    await Promise.all(held.map((c) => this.#release(c, "shutdown")));
    await Promise.all([...this.#engaged].map((c) => this.#target!.disengage(c)));
    this.#engaged.clear();
    await Promise.all([...this.#windingDown]);
    inner.abort();
    await watching;
    this.#client.close();
    this.#peerClient.close();
    this.#log.info("sharding stopped", { identity: this.identity });
  }

  #peersSeen(): { identity: string; weight: number }[] {
    const seen = new Map<string, number>();
    for (const key of this.#store.keys()) {
      const l = this.#store.get(key) as unknown as LeaseObject;
      if (l.metadata.labels?.[ROLE_LABEL] !== "peer" || !l.spec?.holderIdentity) continue;
      seen.set(l.spec.holderIdentity, Number(l.metadata.annotations?.[WEIGHT_ANNOTATION] ?? "1") || 1);
    }
    seen.set(this.identity, this.#table.weight);
    return [...seen].sort(([a], [b]) => a.localeCompare(b)).map(([identity, weight]) => ({ identity, weight }));
  }

  #leasesChanged(keys: string[]): void {
    if (this.#watcher.snapshot().synced) this.#table.synced();
    for (const key of keys) {
      const l = this.#store.get(key) as unknown as LeaseObject | undefined;
      if (!l) {
        const gone = this.#gone.get(key);
        if (gone) this.#table.forget(gone);
        this.#gone.delete(key);
        continue;
      }
      this.#gone.set(key, l);
      const seen = this.#table.observe(l);
      if (seen?.role === "fence") this.#checkFence(seen.cluster);
    }
    this.#kick?.();
  }

  /** The last version of every Lease in the store, so a deletion still knows its role and holder. */
  readonly #gone = new Map<string, LeaseObject>();

  /** After a fence changed: if this replica held it and someone else holds it now, stop there at once. */
  #checkFence(cluster: string): void {
    const held = this.#table.held(cluster);
    const f = this.#table.fence(cluster);
    if (!held || !f || f.holder === this.identity) return;
    if (this.#table.mayReconcile(cluster)) {
      this.#violations++;
      this.#log.error("fence taken by another replica while this one still held it", {
        cluster,
        holder: f.holder,
      });
    } else {
      this.#log.warn("fence taken over after this replica's hold lapsed", { cluster, holder: f.holder });
    }
    this.#windDown(this.#stopReconciling(cluster));
    this.#table.drop(cluster);
  }

  /**
   * Renews this replica's peer Lease every renew period. An attempt gets at most two periods (a slow answer does not
   * use up the renew deadline in one go), and a failed one is retried after half a period.
   */
  async #renewLoop(signal: AbortSignal): Promise<void> {
    const t = this.#table.timings;
    while (!signal.aborted) {
      const sentAt = this.#clock.now();
      let ok = false;
      try {
        const lease = await this.#bounded(t.peerRenewPeriodMs * 2, signal, (s) => this.#writePeerLease(s));
        this.#peerLease = lease;
        this.#table.renewed(sentAt);
        this.#table.observe(lease);
        this.#lastError = null;
        ok = true;
      } catch (err) {
        if (signal.aborted) break;
        this.#lastError = `renewing peer Lease: ${errorText(err)}`;
        this.#log.warn("cannot renew the shard peer Lease", { error: this.#lastError });
      }
      this.#kick?.();
      await this.#clock.sleep(ok ? t.peerRenewPeriodMs : t.peerRenewPeriodMs / 2, signal);
    }
  }

  async #writePeerLease(signal: AbortSignal): Promise<LeaseObject> {
    const t = this.#table.timings;
    const now = microTime(this.#clock.now());
    const spec = (old?: LeaseSpec): LeaseSpec => ({
      holderIdentity: this.identity,
      leaseDurationSeconds: Math.ceil(t.peerLeaseDurationMs / 1000),
      acquireTime: old?.acquireTime ?? now,
      renewTime: now,
      leaseTransitions: old?.leaseTransitions ?? 0,
    });
    const meta = {
      labels: { [ROLE_LABEL]: "peer", [GROUP_LABEL]: this.#o.group },
      annotations: { [WEIGHT_ANNOTATION]: String(this.#table.weight) },
    };
    const name = peerLeaseName(this.#o.group, this.identity);
    let current = this.#peerLease;
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        const out = current
          ? await this.#peerLeases.update(current, spec(current.spec), signal, meta)
          : await this.#peerLeases.create(name, spec(), meta, signal);
        this.#writes++;
        return out;
      } catch (err) {
        const code = httpStatusOf(err);
        if (code !== 409 && code !== 404) throw err;
        current = await this.#peerLeases.get(name, signal);
      }
    }
    throw new Error(`peer Lease ${this.#o.namespace}/${name} changed under this replica twice in a row`);
  }

  /** Every quarter second: stop reconciling wherever this replica's hold is no longer certain. */
  async #guardLoop(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      if (!this.#table.selfLive() && this.#table.heldClusters().length > 0) {
        this.#log.error("could not renew the shard peer Lease in time; stopping reconciling everywhere", {
          renewDeadlineMs: this.#table.timings.peerRenewDeadlineMs,
          error: this.#lastError,
        });
        for (const c of this.#table.heldClusters()) {
          this.#windDown(this.#stopReconciling(c));
          this.#table.drop(c);
        }
      }
      // A fence held while live, but not reconciling (taken just as a renewal was late): start there now.
      for (const c of this.#table.heldClusters()) {
        if (!this.#reconciling.has(c) && !this.#busy.has(c) && this.#table.mayReconcile(c)) {
          this.#run(c, () => this.#startReconciling(c));
        }
      }
      await this.#clock.sleep(250, signal);
    }
  }

  /** Ownership passes: every renew period, and soon after any Lease or registration change. */
  async #passLoop(signal: AbortSignal): Promise<void> {
    const t = this.#table.timings;
    while (!signal.aborted) {
      const woken = new Promise<void>((resolve) => (this.#kick = resolve));
      try {
        this.#pass();
      } catch (err) {
        this.#log.error("shard ownership pass failed", { error: errorText(err) });
      }
      const wake = new AbortController();
      const stop = () => wake.abort();
      signal.addEventListener("abort", stop, { once: true });
      woken.then(stop);
      // Wake when a peer Lease expires, so a dead replica's clusters are taken at once, not up to a period later.
      const expiry = this.#table.nextPeerExpiry();
      const wait = expiry === undefined
        ? t.peerRenewPeriodMs
        : Math.min(t.peerRenewPeriodMs, expiry - this.#clock.now() + 1);
      await this.#clock.sleep(Math.max(1, wait), wake.signal);
      signal.removeEventListener("abort", stop);
      // Coalesce bursts of Lease events into one pass.
      if (!signal.aborted) await this.#clock.sleep(20, signal);
    }
    this.#kick = undefined;
  }

  #pass(): void {
    if (this.#stopping || !this.#table.isSynced) return;
    const t = this.#table.timings;
    const live = this.#table.selfLive();
    // A new replica waits two periods after its start, so its first view includes the replicas started with it.
    const settled = this.#clock.now() >= this.#startedAt + t.peerRenewPeriodMs * 2;
    const peers = this.#table.livePeers();
    const owners = this.#table.owners(peers);
    const limit = this.#o.concurrency ?? 32;
    for (const name of this.#registered.keys()) {
      if (this.#busy.size >= limit) break;
      if (this.#busy.has(name)) continue;
      const held = this.#table.held(name) !== undefined;
      const want = live && owners.get(name) === this.identity;
      if (held && !want && live) this.#run(name, () => this.#release(name, "handoff"));
      else if (!held && want && settled && this.#table.takeable(name).ok) this.#run(name, () => this.#acquire(name));
    }
    // Fences naming this replica that it does not hold (dropped after a lapse): nobody else may take them while this
    // replica is live, so it frees those the hash gives to others (the ones it wants were taken again above).
    if (live) {
      for (const name of this.#table.orphans()) {
        if (this.#busy.size >= limit) break;
        if (this.#busy.has(name)) continue;
        if (this.#registered.has(name) && owners.get(name) === this.identity) continue;
        this.#run(name, () => this.#freeOrphan(name));
      }
    }
    for (const name of this.#table.heldClusters()) {
      if (!this.#registered.has(name) && !this.#busy.has(name)) this.#run(name, () => this.#release(name, "gone"));
    }
    // A replica killed leaves its peer Lease behind: the first live replica to see it dead for 4 durations deletes it
    // (only that version of it: a replica that came back and renewed keeps it).
    for (const p of this.#table.stalePeers(4)) {
      const key = `peer ${p.holder}`;
      if (this.#busy.has(key) || this.#busy.size >= limit) continue;
      this.#run(key, async () => {
        await this.#leases.delete(p.name, p.resourceVersion);
        this.#log.info("deleted the peer Lease of a replica dead for 4 lease durations", { peer: p.holder });
      });
    }
  }

  /** One fence operation per cluster at a time; a failure is logged and retried on a later pass. */
  #run(name: string, op: () => Promise<void>): Promise<void> {
    const before = this.#busy.get(name) ?? Promise.resolve();
    const run = before.then(op).catch((err) => {
      this.#lastError = `cluster ${name}: ${errorText(err)}`;
      this.#log.warn("shard fence operation failed", { cluster: name, error: errorText(err) });
    }).finally(() => {
      if (this.#busy.get(name) === run) this.#busy.delete(name);
      this.#kick?.();
    });
    this.#busy.set(name, run);
    return run;
  }

  async #acquire(cluster: string): Promise<void> {
    const t = this.#table.timings;
    const name = fenceLeaseName(this.#o.group, cluster);
    const current = await this.#leases.get(name);
    if (current) this.#table.observe(current);
    const take = this.#table.takeable(cluster);
    if (!take.ok || this.#table.desiredOwner(cluster) !== this.identity || !this.#registered.has(cluster)) return;
    if (take.reason === "holder-gone") {
      // The watch may be behind: read the holder's peer Lease now; a change means it is alive after all.
      const seen = this.#table.peer(take.holder);
      const fresh = await this.#leases.get(seen?.name ?? peerLeaseName(this.#o.group, take.holder));
      if (fresh && (!seen || fresh.metadata.resourceVersion !== seen.resourceVersion)) {
        this.#table.observe(fresh);
        return;
      }
    }
    const now = microTime(this.#clock.now());
    const spec: LeaseSpec = {
      holderIdentity: this.identity,
      // Informational: the fence lives as long as its holder's peer Lease, whose duration this is.
      leaseDurationSeconds: Math.ceil(t.peerLeaseDurationMs / 1000),
      acquireTime: now,
      renewTime: now,
      leaseTransitions: current ? (current.spec?.leaseTransitions ?? 0) + 1 : 0,
    };
    const meta = {
      labels: { [ROLE_LABEL]: "fence", [GROUP_LABEL]: this.#o.group },
      annotations: { [CLUSTER_ANNOTATION]: cluster },
    };
    const sentAt = this.#clock.now();
    let lease: LeaseObject;
    try {
      lease = current
        ? await this.#leases.update(current, spec, undefined, meta)
        : await this.#leases.create(name, spec, meta);
    } catch (err) {
      if (httpStatusOf(err) === 409) return; // another replica wrote first; the next pass sees who
      throw err;
    }
    this.#writes++;
    this.#acquired++;
    this.#table.hold(cluster, lease, sentAt);
    this.#log.info("fence acquired; reconciling here", {
      cluster,
      previousHolder: take.holder || null,
      reason: take.reason,
    });
    await this.#startReconciling(cluster);
  }

  /** Frees a fence that still names this replica although it does not hold it (after a lapse). */
  async #freeOrphan(cluster: string): Promise<void> {
    if (this.#table.held(cluster)) return;
    const fresh = await this.#leases.get(fenceLeaseName(this.#o.group, cluster));
    if (!fresh) return;
    this.#table.observe(fresh);
    if (fresh.spec?.holderIdentity !== this.identity || this.#table.held(cluster)) return;
    await this.#leases.update(fresh, { ...fresh.spec, holderIdentity: "", renewTime: microTime(this.#clock.now()) });
    this.#writes++;
    this.#released++;
    this.#log.info("fence freed after a lapse", { cluster });
  }

  /**
   * Stops reconciling, then frees the fence so the next owner takes it at once. The stop is synchronous (see
   * `#stopReconciling`): the fence is freed right after it, while the cluster's watches still wind down.
   */
  async #release(cluster: string, why: string): Promise<void> {
    const h = this.#table.held(cluster);
    this.#windDown(this.#stopReconciling(cluster));
    this.#table.drop(cluster);
    if (h) await this.#free(cluster, h.lease, why);
  }

  /**
   * Tracks a cluster's teardown (its watches winding down after the synchronous stop) without holding up fence work:
   * a slow teardown never blocks other hand-overs. `start` awaits them all before it settles.
   */
  #windDown(p: Promise<void>): void {
    const tracked: Promise<void> = p.catch((err) =>
      this.#log.warn("cluster teardown failed", { error: errorText(err) })
    )
      .finally(() => this.#windingDown.delete(tracked));
    this.#windingDown.add(tracked);
  }

  async #free(cluster: string, lease: LeaseObject, why: string): Promise<void> {
    const h = { lease };
    const now = microTime(this.#clock.now());
    const spec: LeaseSpec = { ...h.lease.spec, holderIdentity: "", renewTime: now };
    try {
      await this.#leases.update(h.lease, spec);
    } catch (err) {
      const code = httpStatusOf(err);
      if (code === 404) return;
      if (code !== 409) throw err;
      const fresh = await this.#leases.get(fenceLeaseName(this.#o.group, cluster));
      if (fresh?.spec?.holderIdentity !== this.identity) return;
      await this.#leases.update(fresh, { ...fresh.spec, holderIdentity: "", renewTime: now });
    }
    this.#writes++;
    this.#released++;
    this.#log.info("fence released", { cluster, why });
  }

  async #startReconciling(cluster: string): Promise<void> {
    const r = this.#registered.get(cluster);
    if (!r || !this.#table.mayReconcile(cluster)) return;
    this.#reconciling.add(cluster);
    if (this.#o.warm) {
      this.#target!.resume(cluster);
    } else {
      this.#engaged.add(cluster);
      await this.#target!.engage(cluster, r.access, r.registration);
    }
  }

  /**
   * Stops reconciling in `cluster`. The stop itself is synchronous (Hub.disengage aborts the cluster and closes its
   * client before its first await; Hub.pause cancels in-flight reconciles); the promise settles once it is all gone.
   */
  #stopReconciling(cluster: string): Promise<void> {
    this.#reconciling.delete(cluster);
    if (this.#o.warm) {
      this.#target!.pause(cluster);
      return Promise.resolve();
    }
    if (!this.#engaged.delete(cluster)) return Promise.resolve();
    return this.#target!.disengage(cluster);
  }

  async #deletePeerLease(): Promise<void> {
    const lease = this.#peerLease;
    this.#table.lapse();
    if (!lease) return;
    try {
      await this.#bounded(
        this.#table.timings.peerRenewPeriodMs * 2,
        undefined,
        (s) => this.#peerLeases.delete(lease.metadata.name, undefined, s),
      );
      this.#log.info("peer Lease deleted", { lease: lease.metadata.name });
    } catch (err) {
      this.#log.warn("could not delete the peer Lease; the others take over when it expires", {
        error: errorText(err),
      });
    }
  }

  /** Runs `fn` with a signal that aborts after `ms` on the injected clock, or with `parent`. */
  async #bounded<T>(ms: number, parent: AbortSignal | undefined, fn: (s: AbortSignal) => Promise<T>): Promise<T> {
    const ac = new AbortController();
    const timer = this.#clock.setTimer(ms, () => ac.abort(new DOMException("lease request timed out", "TimeoutError")));
    const onParent = () => ac.abort(parent?.reason);
    parent?.addEventListener("abort", onParent, { once: true });
    try {
      return await fn(ac.signal);
    } finally {
      timer.cancel();
      parent?.removeEventListener("abort", onParent);
    }
  }
}

/** Keeps what the shard reads of a Lease: name, version, labels, annotations, spec. */
function projectLease(raw: Record<string, unknown>): StoredObject {
  const m = (raw.metadata ?? {}) as Record<string, unknown>;
  return {
    metadata: {
      name: String(m.name ?? ""),
      namespace: m.namespace as string | undefined,
      resourceVersion: m.resourceVersion as string | undefined,
      labels: m.labels,
      annotations: m.annotations,
    } as StoredObject["metadata"],
    spec: raw.spec,
  };
}

/** A DNS-1123 name part from any text: lowercase, [a-z0-9-], at most `max` characters, no dash at either end. */
function slug(text: string, max: number): string {
  return text.toLowerCase().replace(/[^a-z0-9-]+/g, "-").slice(0, max).replace(/^-+|-+$/g, "") || "x";
}

/** `GROUP-peer-IDENTITY`, made a valid Lease name. */
export function peerLeaseName(group: string, identity: string): string {
  return `${group}-peer-${slug(identity, 60)}-${fnv1a64(identity).toString(16).padStart(16, "0").slice(0, 8)}`;
}

/** `GROUP-fence-CLUSTER-HASH`: the hash keeps names distinct when slugging or truncation makes them alike. */
export function fenceLeaseName(group: string, cluster: string): string {
  return `${group}-fence-${slug(cluster, 60)}-${fnv1a64(cluster).toString(16).padStart(16, "0").slice(0, 8)}`;
}

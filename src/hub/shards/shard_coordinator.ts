// One replica's side of sharding: which registered clusters it owns, the fence Leases it takes and frees for them, and its hand-over on stop.

import type * as prom from "../../util/prometheus.ts";
import type { ClusterAccess } from "../../kube/mod.ts";
import { KubeClient } from "../../kube/mod.ts";
import { type Clock, errorText, type Logger, SystemClock } from "../../util/mod.ts";
import type { ClusterRegistration, RegistrationProblem } from "../hub.ts";
import { LeaseClient } from "../leadership/leases.ts";
import type { EngageTarget } from "../providers/mod.ts";
import { Engagements, type ShardTarget } from "./_engagements.ts";
import { Fences } from "./_fences.ts";
import { LeaseWatch } from "./_lease_watch.ts";
import { PeerLease } from "./_peer_lease.ts";
import { registerShardMetrics } from "./_shard_metrics.ts";
import { SHARD_TIMING_DEFAULTS, ShardTable, type ShardTimings } from "./shard_table.ts";
import type { ShardCounters, ShardPeer, ShardStatus } from "./shard_status.ts";

export type { ShardTarget } from "./_engagements.ts";

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
  readonly #peerLease: PeerLease;
  readonly #watch: LeaseWatch;
  readonly #fences: Fences;
  readonly #registered = new Map<string, Registered>();
  readonly #engagements: Engagements;
  readonly #busy = new Map<string, Promise<void>>();
  #startedAt = 0;
  #stopping = false;
  #kick: (() => void) | undefined;
  #lastError: string | null = null;
  readonly #counters: ShardCounters = { writes: 0, acquired: 0, released: 0, violations: 0 };

  constructor(options: ShardCoordinatorOptions) {
    this.#o = options;
    this.identity = options.identity;
    this.#clock = options.clock ?? new SystemClock();
    this.#log = options.logger.child({ cluster: options.home.name, shard: options.identity });
    this.#engagements = new Engagements(options.warm ?? false, this.#log);
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
    const common = { table: this.#table, counters: this.#counters, clock: this.#clock, logger: this.#log };
    this.#peerLease = new PeerLease({
      ...common,
      leases: new LeaseClient(this.#peerClient, options.namespace),
      namespace: options.namespace,
      group: options.group,
      identity: options.identity,
      onAttempt: () => this.#kick?.(),
      onError: (error) => (this.#lastError = error),
    });
    this.#fences = new Fences({ ...common, leases: this.#leases, group: options.group, identity: options.identity });
    this.#watch = new LeaseWatch({
      cluster: options.home.name,
      client: this.#client,
      leases: this.#leases,
      namespace: options.namespace,
      group: options.group,
      table: this.#table,
      onFence: (cluster) => this.#checkFence(cluster),
      onChange: () => this.#kick?.(),
      clock: this.#clock,
      logger: this.#log,
    });
  }

  /** The Hub (or any ShardTarget) this coordinator engages clusters in; call before `start`. */
  connect(target: ShardTarget): void {
    this.#engagements.connect(target);
  }

  /** A provider registered (or re-registered) a cluster: engaged here if and once this replica owns it. */
  async engage(name: string, access: ClusterAccess, registration: ClusterRegistration): Promise<void> {
    const again = this.#registered.has(name);
    this.#registered.set(name, { access, registration });
    this.#table.register(name);
    await this.#engagements.register(name, access, registration, again);
    this.#kick?.();
  }

  /** A cluster was unregistered: disengaged here, its fence released if this replica held it. */
  async disengage(name: string): Promise<void> {
    this.#registered.delete(name);
    this.#table.unregister(name);
    await this.#run(name, () => this.#release(name, "unregistered"));
    await this.#engagements.disengage(name);
  }

  hold(name: string, problem: RegistrationProblem | undefined): void {
    this.#engagements.target!.hold(name, problem);
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
    for (const p of this.#watch.peersSeen({ identity: this.identity, weight: this.#table.weight })) {
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
      handoffs: { acquired: this.#counters.acquired, released: this.#counters.released },
      fenceViolations: this.#counters.violations,
      leaseWrites: this.#counters.writes,
      pending: { fenceOps: this.#busy.size, teardowns: this.#engagements.teardowns },
      lastError: this.#lastError,
      clusters,
    };
  }

  /** Adds the `hub_shard_*` series to a Prometheus registry. */
  registerMetrics(registry: prom.MetricRegistry): void {
    registerShardMetrics(registry, () => this.status());
  }

  /** Runs until `signal` aborts; then hands everything over and settles. */
  async start(signal: AbortSignal): Promise<void> {
    if (!this.#engagements.target) throw new Error("ShardCoordinator.start: connect() a target first");
    this.#startedAt = this.#clock.now();
    this.#log.info("sharding started", {
      identity: this.identity,
      weight: this.#table.weight,
      leases: `${this.#o.namespace}/${this.#o.group}`,
      warm: this.#o.warm ?? false,
    });
    const inner = new AbortController();
    const watching = this.#watch.start(inner.signal);
    const renewing = this.#peerLease.start(signal);
    const guarding = this.#guardLoop(signal);
    const passing = this.#passLoop(signal);
    await Promise.all([renewing, guarding, passing]);
    // Graceful stop: the peer Lease goes first, so the others' hash already gives this replica's clusters to them; each
    // fence is then freed right after reconciling stopped there, and taken by its next owner on the spot.
    this.#stopping = true;
    await Promise.all([...this.#busy.values()]);
    const held = this.#table.heldClusters();
    await this.#peerLease.delete();
    await Promise.all(held.map((c) => this.#release(c, "shutdown")));
    await this.#engagements.disengageAll();
    inner.abort();
    await watching;
    this.#client.close();
    this.#peerClient.close();
    this.#log.info("sharding stopped", { identity: this.identity });
  }

  /** After a fence changed: if this replica held it and someone else holds it now, stop there at once. */
  #checkFence(cluster: string): void {
    const held = this.#table.held(cluster);
    const f = this.#table.fence(cluster);
    if (!held || !f || f.holder === this.identity) return;
    if (this.#table.mayReconcile(cluster)) {
      this.#counters.violations++;
      this.#log.error("fence taken by another replica while this one still held it", {
        cluster,
        holder: f.holder,
      });
    } else {
      this.#log.warn("fence taken over after this replica's hold lapsed", { cluster, holder: f.holder });
    }
    this.#engagements.stopReconciling(cluster);
    this.#table.drop(cluster);
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
          this.#engagements.stopReconciling(c);
          this.#table.drop(c);
        }
      }
      // A fence held while live, but not reconciling (taken just as a renewal was late): start there now.
      for (const c of this.#table.heldClusters()) {
        if (!this.#engagements.isReconciling(c) && !this.#busy.has(c) && this.#table.mayReconcile(c)) {
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
        this.#run(name, () => this.#fences.freeOrphan(name));
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
    const wanted = () => this.#registered.has(cluster) && this.#table.desiredOwner(cluster) === this.identity;
    if (await this.#fences.acquire(cluster, wanted)) await this.#startReconciling(cluster);
  }

  /**
   * Stops reconciling, then frees the fence so the next owner takes it at once. The stop is synchronous (see
   * `Engagements.stopReconciling`): the fence is freed right after it, while the cluster's watches still wind down,
   * once its daemons ended (each is waited for up to its grace period), so they never run on two replicas at once.
   */
  async #release(cluster: string, why: string): Promise<void> {
    const h = this.#table.held(cluster);
    this.#engagements.stopReconciling(cluster);
    this.#table.drop(cluster);
    await this.#engagements.target?.backgroundStopped?.(cluster);
    if (h) await this.#fences.free(cluster, h.lease, why);
  }

  async #startReconciling(cluster: string): Promise<void> {
    const r = this.#registered.get(cluster);
    if (!r || !this.#table.mayReconcile(cluster)) return;
    await this.#engagements.startReconciling(cluster, r.access, r.registration);
  }
}

// What one replica knows about the shard: the peer and fence Leases it observed, on its own clock, and its own fences.

import type { Clock } from "../../util/mod.ts";
import type { LeaseObject } from "../leadership/leases.ts";
import { boundedRendezvous } from "./bounded_rendezvous.ts";
import { type RendezvousPeer, unitHash } from "./rendezvous.ts";

/** The shard's Lease timings. Defaults: 15 s / 10 s / 2 s, controller-runtime's leader-election ones. */
export interface ShardTimings {
  /** A peer Lease not renewed for this long (on the observer's clock) is dead. Default 15 s. */
  peerLeaseDurationMs: number;
  /** A replica that could not renew its own peer Lease for this long stops reconciling everywhere. Default 10 s. */
  peerRenewDeadlineMs: number;
  /** Pause between peer renewals, and between ownership passes. Default 2 s. */
  peerRenewPeriodMs: number;
}

/** Defaults of ShardTimings. */
export const SHARD_TIMING_DEFAULTS: ShardTimings = {
  peerLeaseDurationMs: 15_000,
  peerRenewDeadlineMs: 10_000,
  peerRenewPeriodMs: 2_000,
};

/** The annotation holding a peer's weight, and a fence's full cluster name. */
export const WEIGHT_ANNOTATION = "shard.operator-hub.demo.operator/weight";
export const CLUSTER_ANNOTATION = "shard.operator-hub.demo.operator/cluster";
/** `peer` or `fence`. */
export const ROLE_LABEL = "shard.operator-hub.demo.operator/role";
/** The shard group (`--shard-id`): replicas of one group share clusters; other groups' Leases are ignored. */
export const GROUP_LABEL = "shard.operator-hub.demo.operator/group";

/** One Lease as observed: what it says, and when this replica last saw it change, on its own clock. */
export interface Observed {
  name: string;
  resourceVersion: string;
  holder: string;
  durationMs: number;
  /** When this replica first saw this resourceVersion. */
  changedAt: number;
  weight: number;
  object: LeaseObject;
}

/** Why a fence may be taken now, or why not. */
export type Takeable =
  | { ok: true; reason: "absent" | "free" | "holder-gone" | "mine"; holder: string }
  | { ok: false; reason: "held" | "not-synced"; holder: string };

/** One fence this replica holds. */
export interface HeldFence {
  /** When the write that took the fence was sent, on this replica's clock. */
  writtenAt: number;
  /** The fence as last written. */
  lease: LeaseObject;
}

/**
 * The shard's state as one replica sees it. Pure: no I/O; time comes from the injected clock.
 *
 * Guarantees:
 * - a peer counts as live while its Lease changed less than its leaseDurationSeconds ago on this replica's clock
 *   (client-go's rule: the Lease's own timestamps are never compared with this clock, so clock skew does not matter);
 *   this replica counts itself live only while its own last successful renewal was sent less than the renew
 *   deadline ago;
 * - a fence's liveness is its holder's: it may be taken when it does not exist, when it names no holder, or when its
 *   holder's peer Lease is dead or was deleted at least a peer duration ago (the coordinator confirms a dead peer with
 *   a fresh read before it writes); a fence is never taken from a live holder, which releases it itself when the
 *   rendezvous hash gives the cluster to another replica;
 * - `mayReconcile(c)` holds only while this replica holds c's fence and is live, that is until its renew deadline,
 *   which ends before any other replica may count it dead (the lease duration, from a later observation);
 * - `desiredOwner(c)` is the bounded-load rendezvous owner (`boundedRendezvous`) of c among the registered clusters
 *   and the live peers: replicas that see the same clusters and peers want the same owners. Safety never rests on
 *   that agreement: while views differ, the fences still admit one holder per cluster.
 *
 * Assumptions: the replicas' clocks run at the same rate within a few percent (they need not agree on the time);
 * a write sent before the renew deadline is applied by the API server within the margin (lease duration minus renew
 * deadline: 5 s by default).
 */
export class ShardTable {
  readonly identity: string;
  readonly weight: number;
  readonly timings: ShardTimings;
  readonly #clock: Clock;
  readonly #peers = new Map<string, Observed>();
  /** identity → when its peer Lease was seen deleted. */
  readonly #deleted = new Map<string, number>();
  readonly #fences = new Map<string, Observed>();
  readonly #held = new Map<string, HeldFence>();
  #syncedAt: number | undefined;
  #renewedAt: number | undefined;
  /** peer → cluster → ln(u): the hashes of an ownership pass are computed once per peer and cluster. */
  readonly #logU = new Map<string, Map<string, number>>();
  /** The registered clusters the owners are computed over; `#generation` counts their changes. */
  readonly #clusters = new Set<string>();
  #generation = 0;
  /** The last assignment, and the clusters generation and peers it was computed from. */
  #assignment: { key: string; owners: Map<string, string> } | undefined;

  constructor(identity: string, weight: number, timings: ShardTimings, clock: Clock) {
    this.identity = identity;
    this.weight = weight;
    this.timings = timings;
    this.#clock = clock;
  }

  /** The Lease watch completed its first list: absences from now on mean something. */
  synced(): void {
    this.#syncedAt ??= this.#clock.now();
  }

  get isSynced(): boolean {
    return this.#syncedAt !== undefined;
  }

  /** Records a peer or fence Lease from the watch (or a fresh read). Returns the cluster of a fence, if it is one. */
  observe(lease: LeaseObject): { role: "peer"; identity: string } | { role: "fence"; cluster: string } | undefined {
    const role = lease.metadata.labels?.[ROLE_LABEL];
    const rv = lease.metadata.resourceVersion ?? "";
    const spec = lease.spec ?? {};
    if (role === "peer") {
      const identity = spec.holderIdentity ?? "";
      if (!identity) return undefined;
      const before = this.#peers.get(identity);
      if (before && olderVersion(rv, before.resourceVersion)) return { role: "peer", identity };
      const weight = Number(lease.metadata.annotations?.[WEIGHT_ANNOTATION] ?? "1");
      this.#peers.set(identity, {
        name: lease.metadata.name,
        resourceVersion: rv,
        holder: identity,
        durationMs: (spec.leaseDurationSeconds ?? this.timings.peerLeaseDurationMs / 1000) * 1000,
        changedAt: before && before.resourceVersion === rv ? before.changedAt : this.#clock.now(),
        weight: Number.isFinite(weight) && weight > 0 ? weight : 1,
        object: lease,
      });
      this.#deleted.delete(identity);
      return { role: "peer", identity };
    }
    if (role === "fence") {
      const cluster = lease.metadata.annotations?.[CLUSTER_ANNOTATION];
      if (!cluster) return undefined;
      const before = this.#fences.get(cluster);
      // A watch event can arrive after this replica's own newer write (or fresh read) of the same Lease.
      if (before && olderVersion(rv, before.resourceVersion)) return { role: "fence", cluster };
      this.#fences.set(cluster, {
        name: lease.metadata.name,
        resourceVersion: rv,
        holder: spec.holderIdentity ?? "",
        durationMs: (spec.leaseDurationSeconds ?? this.timings.peerLeaseDurationMs / 1000) * 1000,
        changedAt: before && before.resourceVersion === rv ? before.changedAt : this.#clock.now(),
        weight: 1,
        object: lease,
      });
      return { role: "fence", cluster };
    }
    return undefined;
  }

  /** A Lease the watch saw deleted. */
  forget(lease: LeaseObject): void {
    const role = lease.metadata.labels?.[ROLE_LABEL];
    if (role === "peer") {
      const identity = lease.spec?.holderIdentity ?? "";
      if (this.#peers.delete(identity)) this.#deleted.set(identity, this.#clock.now());
    } else if (role === "fence") {
      const cluster = lease.metadata.annotations?.[CLUSTER_ANNOTATION];
      if (cluster) this.#fences.delete(cluster);
    }
  }

  /** This replica's own peer Lease write, sent at `sentAt`, succeeded. */
  renewed(sentAt: number): void {
    if (this.#renewedAt === undefined || sentAt > this.#renewedAt) this.#renewedAt = sentAt;
  }

  /** True while this replica's last successful peer renewal was sent less than the renew deadline ago. */
  selfLive(): boolean {
    return this.#renewedAt !== undefined && this.#clock.now() < this.#renewedAt + this.timings.peerRenewDeadlineMs;
  }

  /** Forgets this replica's renewals (after a lapse, or on shutdown): it is not live until it renews again. */
  lapse(): void {
    this.#renewedAt = undefined;
  }

  /** Whether `identity`'s peer Lease is live as seen from here. */
  peerLive(identity: string): boolean {
    if (identity === this.identity) return this.selfLive();
    const p = this.#peers.get(identity);
    return p !== undefined && this.#clock.now() < p.changedAt + p.durationMs;
  }

  /** Whether `identity` is dead for sure: its Lease expired here, or was deleted (or never seen) a duration ago. */
  peerGone(identity: string): boolean {
    if (identity === this.identity) return false;
    const now = this.#clock.now();
    const p = this.#peers.get(identity);
    if (p) return now >= p.changedAt + p.durationMs;
    if (this.#syncedAt === undefined) return false;
    const since = this.#deleted.get(identity) ?? this.#syncedAt;
    return now >= since + this.timings.peerLeaseDurationMs;
  }

  /** The peer as observed (resourceVersion, for the coordinator's confirming read). */
  peer(identity: string): Observed | undefined {
    return this.#peers.get(identity);
  }

  /** The live peers, this replica included while it is live, sorted by identity. */
  livePeers(): RendezvousPeer[] {
    const out: RendezvousPeer[] = [];
    for (const [identity, p] of this.#peers) {
      if (identity !== this.identity && this.peerLive(identity)) out.push({ identity, weight: p.weight });
    }
    if (this.selfLive()) out.push({ identity: this.identity, weight: this.weight });
    return out.sort((a, b) => (a.identity < b.identity ? -1 : a.identity > b.identity ? 1 : 0));
  }

  /** A cluster was registered: it counts in the owners (and in every peer's cap) from now on. */
  register(cluster: string): void {
    if (this.#clusters.has(cluster)) return;
    this.#clusters.add(cluster);
    this.#generation++;
  }

  /** A cluster was unregistered. */
  unregister(cluster: string): void {
    if (this.#clusters.delete(cluster)) this.#generation++;
  }

  /** The registered clusters, in registration order. */
  registered(): string[] {
    return [...this.#clusters];
  }

  /**
   * Every registered cluster's owner among `peers` (by default the live ones): `boundedRendezvous`, computed once per
   * change of the clusters or the peers, from cached hashes.
   */
  owners(peers: RendezvousPeer[] = this.livePeers()): Map<string, string> {
    const key = `${this.#generation}|${peers.map((p) => `${p.identity}=${p.weight}`).sort().join(",")}`;
    if (this.#assignment?.key === key) return this.#assignment.owners;
    this.#pruneHashes(new Set(peers.map((p) => p.identity)));
    const owners = boundedRendezvous([...this.#clusters], peers, { logU: (c, p) => this.#log(c, p) });
    this.#assignment = { key, owners };
    return owners;
  }

  /** The owner `owners()` gives a registered `cluster` among `peers` (by default the live ones), or undefined. */
  desiredOwner(cluster: string, peers: RendezvousPeer[] = this.livePeers()): string | undefined {
    return this.owners(peers).get(cluster);
  }

  #log(cluster: string, peer: string): number {
    let logs = this.#logU.get(peer);
    if (!logs) this.#logU.set(peer, logs = new Map());
    let l = logs.get(cluster);
    if (l === undefined) logs.set(cluster, l = Math.log(unitHash(cluster, peer)));
    return l;
  }

  /** Drops cached hashes of peers not in `identities` and of clusters no longer registered. */
  #pruneHashes(identities: Set<string>): void {
    for (const [peer, logs] of this.#logU) {
      if (!identities.has(peer)) this.#logU.delete(peer);
      else if (logs.size > this.#clusters.size) {
        for (const c of logs.keys()) if (!this.#clusters.has(c)) logs.delete(c);
      }
    }
  }

  /** Peer Leases of other replicas unchanged for `factor` × their duration: dead long enough to be deleted. */
  stalePeers(factor: number): Observed[] {
    const now = this.#clock.now();
    return [...this.#peers.values()].filter((p) =>
      p.holder !== this.identity && now >= p.changedAt + p.durationMs * factor
    );
  }

  /** When the next observed peer Lease expires (on this clock), if any is live now: a pass is due then. */
  nextPeerExpiry(): number | undefined {
    const now = this.#clock.now();
    let next: number | undefined;
    for (const p of this.#peers.values()) {
      const at = p.changedAt + p.durationMs;
      if (at > now && (next === undefined || at < next)) next = at;
    }
    for (const at of this.#deleted.values()) {
      const gone = at + this.timings.peerLeaseDurationMs;
      if (gone > now && (next === undefined || gone < next)) next = gone;
    }
    return next;
  }

  /** The fence as observed. */
  fence(cluster: string): Observed | undefined {
    return this.#fences.get(cluster);
  }

  /** Whether this replica may write `cluster`'s fence now, and why. */
  takeable(cluster: string): Takeable {
    if (this.#syncedAt === undefined) return { ok: false, reason: "not-synced", holder: "" };
    const f = this.#fences.get(cluster);
    if (!f) return { ok: true, reason: "absent", holder: "" };
    if (!f.holder) return { ok: true, reason: "free", holder: "" };
    if (f.holder === this.identity) return { ok: true, reason: "mine", holder: f.holder };
    if (this.peerGone(f.holder)) return { ok: true, reason: "holder-gone", holder: f.holder };
    return { ok: false, reason: "held", holder: f.holder };
  }

  /** Records a successful write of `cluster`'s fence naming this replica, sent at `sentAt`. */
  hold(cluster: string, lease: LeaseObject, sentAt: number): void {
    this.#held.set(cluster, { writtenAt: sentAt, lease });
    this.observe(lease);
  }

  /** This replica no longer holds `cluster`'s fence (released, lost, or given up). */
  drop(cluster: string): boolean {
    return this.#held.delete(cluster);
  }

  held(cluster: string): HeldFence | undefined {
    return this.#held.get(cluster);
  }

  /** Clusters whose fence this replica holds (valid or not: see `mayReconcile`). */
  heldClusters(): string[] {
    return [...this.#held.keys()];
  }

  /** Whether this replica may reconcile in `cluster` now: it holds the fence and is live. */
  mayReconcile(cluster: string): boolean {
    return this.#held.has(cluster) && this.selfLive();
  }

  /**
   * Fences that name this replica but that it does not hold (it lapsed and dropped them, or restarted its table): it
   * must take them again or free them, since nobody else may while it is live.
   */
  orphans(): string[] {
    const out: string[] = [];
    for (const [cluster, f] of this.#fences) {
      if (f.holder === this.identity && !this.#held.has(cluster)) out.push(cluster);
    }
    return out;
  }

  /**
   * Who owns `cluster` as seen from here: this replica while it may reconcile there; else the fence's holder while
   * its peer Lease is live; else null (nobody may be reconciling there).
   */
  owner(cluster: string): string | null {
    if (this.mayReconcile(cluster)) return this.identity;
    const f = this.#fences.get(cluster);
    if (!f || !f.holder || f.holder === this.identity) return null;
    return this.peerLive(f.holder) ? f.holder : null;
  }
}

/**
 * True when resourceVersion `a` is older than `b`. The API server's versions are etcd revisions (integers); anything
 * else compares as "not older", so an unknown format never hides a change.
 */
export function olderVersion(a: string, b: string): boolean {
  if (!/^\d+$/.test(a) || !/^\d+$/.test(b)) return false;
  return BigInt(a) < BigInt(b);
}

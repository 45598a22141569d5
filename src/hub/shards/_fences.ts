// The fence Lease writes of one replica: take a cluster's fence, free it, free one orphaned after a lapse.

import { httpStatusOf } from "../../kube/mod.ts";
import type { Clock, Logger } from "../../util/mod.ts";
import { type LeaseClient, type LeaseObject, type LeaseSpec, microTime } from "../leadership/leases.ts";
import { fenceLeaseName, peerLeaseName } from "./lease_names.ts";
import { CLUSTER_ANNOTATION, GROUP_LABEL, ROLE_LABEL, type ShardTable } from "./shard_table.ts";
import type { ShardCounters } from "./shard_status.ts";

export interface FencesOptions {
  leases: LeaseClient;
  group: string;
  identity: string;
  table: ShardTable;
  counters: ShardCounters;
  clock: Clock;
  logger: Logger;
}

/**
 * Writes fence Leases (`GROUP-fence-…`); the caller runs at most one operation per cluster at a time.
 *
 * Guarantees: a fence is written only from a fresh read, with that read's resourceVersion, so of two replicas racing
 * for it one gets a 409 and takes nothing; a fence held by a replica whose peer Lease looks dead is taken only after a
 * fresh read of that peer Lease shows it unchanged; a fence is freed only while it still names this replica.
 */
export class Fences {
  readonly #o: FencesOptions;

  constructor(options: FencesOptions) {
    this.#o = options;
  }

  /**
   * Takes `cluster`'s fence if it may be taken and `wanted()` still says this replica should own it; true once held
   * (recorded in the table), false when it was not taken (held by a live peer, lost a race, no longer wanted).
   */
  async acquire(cluster: string, wanted: () => boolean): Promise<boolean> {
    const { table, leases, clock, identity } = this.#o;
    const t = table.timings;
    const name = fenceLeaseName(this.#o.group, cluster);
    const current = await leases.get(name);
    if (current) table.observe(current);
    const take = table.takeable(cluster);
    if (!take.ok || !wanted()) return false;
    if (take.reason === "holder-gone") {
      // The watch may be behind: read the holder's peer Lease now; a change means it is alive after all.
      const seen = table.peer(take.holder);
      const fresh = await leases.get(seen?.name ?? peerLeaseName(this.#o.group, take.holder));
      if (fresh && (!seen || fresh.metadata.resourceVersion !== seen.resourceVersion)) {
        table.observe(fresh);
        return false;
      }
    }
    const now = microTime(clock.now());
    const spec: LeaseSpec = {
      holderIdentity: identity,
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
    const sentAt = clock.now();
    let lease: LeaseObject;
    try {
      lease = current ? await leases.update(current, spec, undefined, meta) : await leases.create(name, spec, meta);
    } catch (err) {
      if (httpStatusOf(err) === 409) return false; // another replica wrote first; the next pass sees who
      throw err;
    }
    this.#o.counters.writes++;
    this.#o.counters.acquired++;
    table.hold(cluster, lease, sentAt);
    this.#o.logger.info("fence acquired; reconciling here", {
      cluster,
      previousHolder: take.holder || null,
      reason: take.reason,
    });
    return true;
  }

  /** Frees a fence this replica held, written last as `lease`: its holder becomes "" for the next owner to take. */
  async free(cluster: string, lease: LeaseObject, why: string): Promise<void> {
    const { leases, clock } = this.#o;
    const now = microTime(clock.now());
    try {
      await leases.update(lease, { ...lease.spec, holderIdentity: "", renewTime: now });
    } catch (err) {
      const code = httpStatusOf(err);
      if (code === 404) return;
      if (code !== 409) throw err;
      const fresh = await leases.get(fenceLeaseName(this.#o.group, cluster));
      if (fresh?.spec?.holderIdentity !== this.#o.identity) return;
      await leases.update(fresh, { ...fresh.spec, holderIdentity: "", renewTime: now });
    }
    this.#o.counters.writes++;
    this.#o.counters.released++;
    this.#o.logger.info("fence released", { cluster, why });
  }

  /** Frees a fence that still names this replica although it does not hold it (after a lapse). */
  async freeOrphan(cluster: string): Promise<void> {
    const { table, leases, clock, identity } = this.#o;
    if (table.held(cluster)) return;
    const fresh = await leases.get(fenceLeaseName(this.#o.group, cluster));
    if (!fresh) return;
    table.observe(fresh);
    if (fresh.spec?.holderIdentity !== identity || table.held(cluster)) return;
    await leases.update(fresh, { ...fresh.spec, holderIdentity: "", renewTime: microTime(clock.now()) });
    this.#o.counters.writes++;
    this.#o.counters.released++;
    this.#o.logger.info("fence freed after a lapse", { cluster });
  }
}

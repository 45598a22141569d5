// This replica's peer Lease: created, renewed every period on its own client, deleted on a graceful stop.

import { httpStatusOf } from "../../kube/mod.ts";
import { type Clock, errorText, type Logger } from "../../util/mod.ts";
import type { LeaseClient, LeaseObject, LeaseSpec } from "../leadership/leases.ts";
import { microTime } from "../leadership/leases.ts";
import { peerLeaseName } from "./lease_names.ts";
import { GROUP_LABEL, ROLE_LABEL, type ShardTable, WEIGHT_ANNOTATION } from "./shard_table.ts";
import type { ShardCounters } from "./shard_status.ts";

export interface PeerLeaseOptions {
  /** On the peer Lease's own client, so a renewal never queues behind fence writes or the Lease watch. */
  leases: LeaseClient;
  namespace: string;
  group: string;
  identity: string;
  table: ShardTable;
  counters: ShardCounters;
  /** After every renewal attempt: the liveness it decides may change the owners. */
  onAttempt(): void;
  /** The last renewal's error, or null once one succeeds. */
  onError(error: string | null): void;
  clock: Clock;
  logger: Logger;
}

/**
 * Keeps this replica's peer Lease (`GROUP-peer-…`) renewed.
 *
 * Guarantees: every successful renewal is recorded in the table with the time it was sent (`ShardTable.renewed`), so
 * the replica counts itself live only until the renew deadline after a renewal that surely landed; an attempt gets at
 * most two renew periods, and a failed one is retried after half a period.
 */
export class PeerLease {
  readonly #o: PeerLeaseOptions;
  #lease: LeaseObject | undefined;

  constructor(options: PeerLeaseOptions) {
    this.#o = options;
  }

  /** Renews until `signal` aborts. */
  async start(signal: AbortSignal): Promise<void> {
    const { table, clock } = this.#o;
    const t = table.timings;
    while (!signal.aborted) {
      const sentAt = clock.now();
      let ok = false;
      try {
        const lease = await bounded(clock, t.peerRenewPeriodMs * 2, signal, (s) => this.#write(s));
        this.#lease = lease;
        table.renewed(sentAt);
        table.observe(lease);
        this.#o.onError(null);
        ok = true;
      } catch (err) {
        if (signal.aborted) break;
        const error = `renewing peer Lease: ${errorText(err)}`;
        this.#o.onError(error);
        this.#o.logger.warn("cannot renew the shard peer Lease", { error });
      }
      this.#o.onAttempt();
      await clock.sleep(ok ? t.peerRenewPeriodMs : t.peerRenewPeriodMs / 2, signal);
    }
  }

  /** Deletes the peer Lease (graceful stop): the others count this replica gone at once. Never throws. */
  async delete(): Promise<void> {
    const lease = this.#lease;
    this.#o.table.lapse();
    if (!lease) return;
    try {
      await bounded(
        this.#o.clock,
        this.#o.table.timings.peerRenewPeriodMs * 2,
        undefined,
        (s) => this.#o.leases.delete(lease.metadata.name, undefined, s),
      );
      this.#o.logger.info("peer Lease deleted", { lease: lease.metadata.name });
    } catch (err) {
      this.#o.logger.warn("could not delete the peer Lease; the others take over when it expires", {
        error: errorText(err),
      });
    }
  }

  async #write(signal: AbortSignal): Promise<LeaseObject> {
    const { table, clock, leases } = this.#o;
    const t = table.timings;
    const now = microTime(clock.now());
    const spec = (old?: LeaseSpec): LeaseSpec => ({
      holderIdentity: this.#o.identity,
      leaseDurationSeconds: Math.ceil(t.peerLeaseDurationMs / 1000),
      acquireTime: old?.acquireTime ?? now,
      renewTime: now,
      leaseTransitions: old?.leaseTransitions ?? 0,
    });
    const meta = {
      labels: { [ROLE_LABEL]: "peer", [GROUP_LABEL]: this.#o.group },
      annotations: { [WEIGHT_ANNOTATION]: String(table.weight) },
    };
    const name = peerLeaseName(this.#o.group, this.#o.identity);
    let current = this.#lease;
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        const out = current
          ? await leases.update(current, spec(current.spec), signal, meta)
          : await leases.create(name, spec(), meta, signal);
        this.#o.counters.writes++;
        return out;
      } catch (err) {
        const code = httpStatusOf(err);
        if (code !== 409 && code !== 404) throw err;
        current = await leases.get(name, signal);
      }
    }
    throw new Error(`peer Lease ${this.#o.namespace}/${name} changed under this replica twice in a row`);
  }
}

/** Runs `fn` with a signal that aborts after `ms` on `clock`, or with `parent`. */
async function bounded<T>(
  clock: Clock,
  ms: number,
  parent: AbortSignal | undefined,
  fn: (s: AbortSignal) => Promise<T>,
): Promise<T> {
  const ac = new AbortController();
  const timer = clock.setTimer(ms, () => ac.abort(new DOMException("lease request timed out", "TimeoutError")));
  const onParent = () => ac.abort(parent?.reason);
  parent?.addEventListener("abort", onParent, { once: true });
  try {
    return await fn(ac.signal);
  } finally {
    timer.cancel();
    parent?.removeEventListener("abort", onParent);
  }
}

// The watch on one shard group's Leases in the home cluster, feeding what it sees into the replica's ShardTable.

import type { KubeClient } from "../../kube/mod.ts";
import { Informer, labelled, objectKey, type Request, type StoredObject, Watcher } from "../../runtime/mod.ts";
import type { Clock, Logger } from "../../util/mod.ts";
import type { LeaseClient, LeaseObject } from "../leadership/leases.ts";
import { GROUP_LABEL, ROLE_LABEL, type ShardTable, WEIGHT_ANNOTATION } from "./shard_table.ts";

export interface LeaseWatchOptions {
  /** The home cluster's name (the cluster of the requests its informer tells). */
  cluster: string;
  client: KubeClient;
  leases: LeaseClient;
  namespace: string;
  group: string;
  table: ShardTable;
  /** A fence Lease changed (after the table recorded it). */
  onFence(cluster: string): void;
  /** Something changed (after every batch of events). */
  onChange(): void;
  clock: Clock;
  logger: Logger;
}

/**
 * Lists and watches the group's Leases (label-selected) and records each in the table; a deleted Lease is forgotten
 * with the last version seen, so its role and holder are still known.
 */
export class LeaseWatch {
  readonly #o: LeaseWatchOptions;
  readonly #informer: Informer;
  /** The last version of every Lease in the store, so a deletion still knows its role and holder. */
  readonly #last = new Map<string, LeaseObject>();

  constructor(options: LeaseWatchOptions) {
    this.#o = options;
    this.#informer = new Informer({
      cluster: options.cluster,
      projection: projectLease,
      watches: (store, onChange) => [
        new Watcher({
          path: options.leases.collection,
          namespace: options.namespace,
          client: labelled(options.client, `${GROUP_LABEL}=${options.group}`),
          store,
          onChange,
          // Synced once listed, even when the group has no Lease yet (a first replica's own peer Lease comes later).
          onSynced: () => {
            options.table.synced();
            options.onChange();
          },
          clock: options.clock,
          logger: options.logger,
          // Bookmarks arrive about once a minute; a silent Lease watch delays takeovers, so reopen it sooner.
          idleTimeoutMs: 75_000,
        }),
      ],
    });
    this.#informer.addListener((requests) => this.#changed(requests));
  }

  /** Runs the watch until `signal` aborts. */
  start(signal: AbortSignal): Promise<void> {
    this.#informer.start(signal);
    return this.#informer.stopped;
  }

  /** Every peer Lease seen (live or not) with its weight, `self` included, sorted by identity. */
  peersSeen(self: { identity: string; weight: number }): { identity: string; weight: number }[] {
    const seen = new Map<string, number>();
    const store = this.#informer.store;
    for (const key of store.keys()) {
      const l = store.get(key) as unknown as LeaseObject;
      if (l.metadata.labels?.[ROLE_LABEL] !== "peer" || !l.spec?.holderIdentity) continue;
      seen.set(l.spec.holderIdentity, Number(l.metadata.annotations?.[WEIGHT_ANNOTATION] ?? "1") || 1);
    }
    seen.set(self.identity, self.weight);
    return [...seen].sort(([a], [b]) => a.localeCompare(b)).map(([identity, weight]) => ({ identity, weight }));
  }

  #changed(requests: readonly Request[]): void {
    const table = this.#o.table;
    for (const request of requests) {
      const key = objectKey(request);
      const l = this.#informer.store.get(key) as unknown as LeaseObject | undefined;
      if (!l) {
        const gone = this.#last.get(key);
        if (gone) table.forget(gone);
        this.#last.delete(key);
        continue;
      }
      this.#last.set(key, l);
      const seen = table.observe(l);
      if (seen?.role === "fence") this.#o.onFence(seen.cluster);
    }
    this.#o.onChange();
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

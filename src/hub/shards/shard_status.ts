// What /status shows of sharding: this replica, the peers it sees, its share, and every cluster's owner.

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

/** The coordinator's running counts, shared by its parts (peer Lease, fences) and read by /status and /metrics. */
export interface ShardCounters {
  /** Peer and fence Lease writes that succeeded. */
  writes: number;
  acquired: number;
  released: number;
  violations: number;
}

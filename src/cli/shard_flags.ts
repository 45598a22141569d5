// The `--shard*` flags: parsing, validation and their --help lines (flags.ts includes them). Pure.

/** `--shard*`: replicas share the registered clusters through Leases in the home cluster. */
export interface ShardFlags {
  /** `--shard`. */
  enabled: boolean;
  /** `--shard-id NAME`: the Leases' name prefix and group; replicas of one id share clusters. */
  id: string;
  /** `--shard-warm`: keep watching clusters owned by other replicas (reconciles off) for a faster takeover. */
  warm: boolean;
  /** `--shard-weight N`: this replica's relative share of the clusters. */
  weight: number;
  leaseDurationMs: number;
  renewDeadlineMs: number;
  renewPeriodMs: number;
}

/** Defaults of the shard flags: the peer Lease times like controller-runtime's leader election. */
export const SHARD_DEFAULTS = {
  id: "operator-hub",
  weight: 1,
  leaseDurationMs: 15_000,
  renewDeadlineMs: 10_000,
  renewPeriodMs: 2_000,
} as const;

/** Raised for a bad shard flag; flags.ts turns it into its own FlagError. */
export class ShardFlagError extends Error {
  override name = "ShardFlagError";
}

/** The shard flags' node:util parseArgs options. */
export const SHARD_OPTIONS = {
  shard: { type: "boolean" },
  "shard-id": { type: "string" },
  "shard-warm": { type: "boolean" },
  "shard-weight": { type: "string" },
  "shard-lease-duration": { type: "string" },
  "shard-renew-deadline": { type: "string" },
  "shard-renew-period": { type: "string" },
} as const;

/** The --help section of the shard flags. */
export function shardHelp(): string[] {
  const d = SHARD_DEFAULTS;
  return [
    "Sharding (off by default; replicas share the registered clusters, each reconciled by exactly one):",
    "  --shard                    hold a peer Lease in the home cluster (leader election's namespace); each",
    "                             cluster goes to the weighted rendezvous-hash winner among the live",
    "                             replicas, which reconciles there only while it holds the cluster's fence Lease",
    "                             (written on hand-over only: it lives as long as its holder's peer Lease)",
    `  --shard-id NAME            the Leases' name prefix and group label (default ${d.id})`,
    "  --shard-warm               keep watching clusters other replicas own (no reconciles): faster takeover,",
    "                             more memory. Default: only owned clusters are watched",
    `  --shard-weight N           this replica's relative share of the clusters (default ${d.weight})`,
    "  --shard-lease-duration SECONDS",
    `                             a replica whose peer Lease is not renewed this long is dead (default ${
      d.leaseDurationMs / 1000
    })`,
    "  --shard-renew-deadline SECONDS",
    `                             stop reconciling everywhere when the own peer Lease was not renewed this long (default ${
      d.renewDeadlineMs / 1000
    })`,
    "  --shard-renew-period SECONDS",
    `                             pause between peer Lease renewals and ownership passes (default ${
      d.renewPeriodMs / 1000
    })`,
  ];
}

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** Parses the shard flags out of parseArgs' values. Throws ShardFlagError naming the flag and the value. */
export function parseShardFlags(values: Record<string, unknown>): ShardFlags {
  const d = SHARD_DEFAULTS;
  const positive = (flag: string, fallback: number, scale: number): number => {
    const raw = values[flag] as string | undefined;
    if (raw === undefined) return fallback;
    const n = Number(raw);
    if (raw.trim() === "" || !Number.isFinite(n) || n <= 0) {
      throw new ShardFlagError(
        `invalid --${flag} "${raw}": must be a positive number${scale > 1 ? " of seconds" : ""}`,
      );
    }
    return Math.round(n * scale);
  };
  const leaseDurationMs = positive("shard-lease-duration", d.leaseDurationMs, 1000);
  const renewDeadlineMs = positive("shard-renew-deadline", d.renewDeadlineMs, 1000);
  const renewPeriodMs = positive("shard-renew-period", d.renewPeriodMs, 1000);
  const raw = values["shard-weight"] as string | undefined;
  const weight = raw === undefined ? d.weight : Number(raw);
  if (raw !== undefined && (raw.trim() === "" || !Number.isFinite(weight) || weight <= 0 || weight > 1000)) {
    throw new ShardFlagError(`invalid --shard-weight "${raw}": must be a number above 0 and at most 1000`);
  }
  if (leaseDurationMs % 1000 !== 0) {
    throw new ShardFlagError(
      `invalid --shard-lease-duration ${leaseDurationMs / 1000}: a Lease holds whole seconds`,
    );
  }
  if (leaseDurationMs <= renewDeadlineMs) {
    throw new ShardFlagError(
      `invalid --shard-lease-duration ${leaseDurationMs / 1000}: it must be greater than --shard-renew-deadline (${
        renewDeadlineMs / 1000
      })`,
    );
  }
  if (renewDeadlineMs <= renewPeriodMs * 2) {
    throw new ShardFlagError(
      `invalid --shard-renew-deadline ${renewDeadlineMs / 1000}: it must be greater than 2 × --shard-renew-period (${
        (renewPeriodMs * 2) / 1000
      })`,
    );
  }
  const id = (values["shard-id"] as string | undefined) ?? d.id;
  if (id.length > 40 || !DNS_SUBDOMAIN.test(id)) {
    throw new ShardFlagError(
      `invalid --shard-id "${id}": a lowercase DNS name of at most 40 characters (it prefixes Lease names)`,
    );
  }
  const enabled = values.shard === true;
  if (!enabled) {
    const stray = Object.keys(SHARD_OPTIONS).find((k) => k !== "shard" && values[k] !== undefined);
    if (stray) throw new ShardFlagError(`--${stray} needs --shard`);
  }
  return {
    enabled,
    id,
    warm: values["shard-warm"] === true,
    weight,
    leaseDurationMs,
    renewDeadlineMs,
    renewPeriodMs,
  };
}

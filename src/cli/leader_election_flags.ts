// The `--leader-elect*` flags: controller-runtime's names and timings, their checks and their --help section. Pure.

import { DNS_LABEL, DNS_SUBDOMAIN, FlagError, type FlagValues, positiveSeconds } from "./flag_values.ts";

/** `--leader-elect*`: controller-runtime's flags and defaults (15 s lease, 10 s renew deadline, 2 s retry). */
export interface LeaderElectionFlags {
  enabled: boolean;
  /** Lease name. */
  id: string;
  /** Lease namespace; default: the home cluster's namespace (the pod's own for in-cluster), else `default`. */
  namespace?: string;
  /** The cluster holding the lease; default `in-cluster` when selected, else the first selected cluster. */
  cluster?: string;
  leaseDurationMs: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
}

/** Defaults of the leader-election flags. */
export const LEADER_ELECTION_DEFAULTS = {
  id: "operator-hub.demo.operator",
  leaseDurationMs: 15_000,
  renewDeadlineMs: 10_000,
  retryPeriodMs: 2_000,
} as const;

/** client-go's JitterFactor: the renew deadline must exceed retryPeriod × this. */
const JITTER_FACTOR = 1.2;

/** The leader-election flags' node:util parseArgs options. */
export const LEADER_ELECTION_OPTIONS = {
  "leader-elect": { type: "boolean" },
  "leader-elect-id": { type: "string" },
  "leader-elect-namespace": { type: "string" },
  "leader-elect-cluster": { type: "string" },
  "leader-elect-lease-duration": { type: "string" },
  "leader-elect-renew-deadline": { type: "string" },
  "leader-elect-retry-period": { type: "string" },
} as const;

/** The --help section of the leader-election flags. */
export function leaderElectionHelp(): string[] {
  const d = LEADER_ELECTION_DEFAULTS;
  return [
    "Leader election (off by default; replicas that do not lead keep watching but do not reconcile):",
    "  --leader-elect             elect one reconciling replica through a coordination.k8s.io/v1 Lease",
    `  --leader-elect-id NAME     the Lease's name (default ${d.id})`,
    "  --leader-elect-namespace NS",
    "                             the Lease's namespace (default: the pod's own in-cluster, else the",
    "                             Lease cluster's context namespace, else default)",
    "  --leader-elect-cluster NAME",
    "                             the cluster holding the Lease (default: the home cluster)",
    "  --leader-elect-lease-duration SECONDS",
    `                             how long a standby waits after the last renewal it saw (default ${
      d.leaseDurationMs / 1000
    })`,
    "  --leader-elect-renew-deadline SECONDS",
    `                             how long the leader retries renewing before it stops leading (default ${
      d.renewDeadlineMs / 1000
    })`,
    "  --leader-elect-retry-period SECONDS",
    `                             pause between attempts to acquire or renew (default ${d.retryPeriodMs / 1000})`,
  ];
}

/**
 * Reads the leader-election flags. Throws FlagError for timings client-go would reject (naming both flags) and for a
 * Lease name or namespace Kubernetes would. Whether `--leader-elect-cluster` is selected is checked by parseFlags.
 */
export function parseLeaderElection(values: FlagValues): LeaderElectionFlags {
  const seconds = (flag: string, fallbackMs: number): number => positiveSeconds(values, flag, fallbackMs);
  const d = LEADER_ELECTION_DEFAULTS;
  const leaseDurationMs = seconds("leader-elect-lease-duration", d.leaseDurationMs);
  const renewDeadlineMs = seconds("leader-elect-renew-deadline", d.renewDeadlineMs);
  const retryPeriodMs = seconds("leader-elect-retry-period", d.retryPeriodMs);
  if (leaseDurationMs <= renewDeadlineMs) {
    throw new FlagError(
      `invalid --leader-elect-lease-duration ${leaseDurationMs / 1000}: it must be greater than ` +
        `--leader-elect-renew-deadline (${renewDeadlineMs / 1000})`,
    );
  }
  if (renewDeadlineMs <= retryPeriodMs * JITTER_FACTOR) {
    throw new FlagError(
      `invalid --leader-elect-renew-deadline ${renewDeadlineMs / 1000}: it must be greater than ` +
        `${JITTER_FACTOR} × --leader-elect-retry-period (${(retryPeriodMs * JITTER_FACTOR) / 1000})`,
    );
  }
  const id = (values["leader-elect-id"] as string | undefined) ?? d.id;
  if (id.length > 253 || !DNS_SUBDOMAIN.test(id)) {
    throw new FlagError(`invalid --leader-elect-id "${id}": a Lease name must be a lowercase DNS subdomain`);
  }
  const namespace = values["leader-elect-namespace"] as string | undefined;
  if (namespace !== undefined && (namespace.length > 63 || !DNS_LABEL.test(namespace))) {
    throw new FlagError(`invalid --leader-elect-namespace "${namespace}": must be a lowercase DNS label`);
  }
  return {
    enabled: values["leader-elect"] === true,
    id,
    namespace,
    cluster: values["leader-elect-cluster"] as string | undefined,
    leaseDurationMs,
    renewDeadlineMs,
    retryPeriodMs,
  };
}

// What the command line says, as parseFlags() hands it to the hub's assembly: one field (or group) per flag of the
// table (flag_table.ts), defaults applied, every check passed.

import type { HubLimits } from "../../hub/hub_limits.ts";
import type { NamePrefixes } from "../../hub/providers/name_prefixes.ts";
import type { CredentialPolicy } from "../../kube/mod.ts";
import type { LogFormat, LogLevel } from "../../util/mod.ts";
import type { LivenessFlag } from "./flag_values.ts";

export type { LivenessFlag } from "./flag_values.ts";

export interface HubFlags {
  help: boolean;
  version: boolean;
  clusters: string[];
  kubeconfigs: string[];
  namespaces: string[];
  liveness?: LivenessFlag;
  /** `--readiness-clusters`: which registered clusters hold /readyz back. */
  readinessClusters: ReadinessClusters;
  logLevel: LogLevel;
  logFormat: LogFormat;
  eventLevel: "Normal" | "Warning";
  serviceAccountRoot?: string;
  /**
   * `--home-cluster NAME`: the cluster that holds the hub's own objects (Leases, cluster Secrets, Mirror sources,
   * TokenReviews). Default: `in-cluster` when selected, else the first selected cluster.
   */
  homeCluster?: string;
  /** `--http2`: offer HTTP/2 to the API servers; HTTP/1.1 keep-alive otherwise. */
  http2: boolean;
  /** `--check-reads`: reading a field an operator's `reads` does not declare throws (development). */
  checkReads: boolean;
  /** `--mirror-orphan-on-unreachable-after SECONDS`: when a deleted Mirror's finalizer gives up on a target. */
  mirrorOrphanOnUnreachableAfterMs: number;
  /** `--mirror-namespaces a,b`: the only namespaces Mirrors may write into; undefined = any but the system ones. */
  mirrorNamespaces?: string[];
  /** `--cleanup-on-remove`: a cluster removed from the registry first loses the hub's finalizers. */
  cleanupOnRemove: boolean;
  /** `--operators a,b`: the built-in operators to host; undefined = all, [] = none (`--operators none`). */
  operators?: string[];
  /** The limits given on the command line; the hub fills in the rest (some scale with the clusters). */
  limits: Partial<HubLimits>;
  /** `--leader-elect*`. */
  leaderElection: LeaderElectionFlags;
  /** `--shard*`. */
  shard: ShardFlags;
  /** `--cluster-dir DIR`: a folder of kubeconfig files, watched. Default: `./clusters` unless --kubeconfig is given. */
  clusterDir?: string;
  /** `--cluster-secrets NAMESPACE`: watch labelled kubeconfig Secrets in this namespace of the home cluster. */
  clusterSecrets?: string;
  /** `--cluster-api` and `--cluster-name-prefix`. */
  clusterProviders: ClusterProviderFlags;
  /** `--cluster-profiles`, `--clusterprofile-provider-file`; unset without them. */
  clusterProfiles?: ClusterProfileFlags;
  /** `--exec-plugin-allowlist`, `--allow-http-servers`: what untrusted kubeconfigs may hold. */
  credentialPolicy: CredentialPolicy;
  /** `--metrics-bind-address` and friends; undefined without it. */
  metricsServing?: MetricsServingFlags;
  /** `--webhook-bind-address` and friends; undefined without it (admission off). */
  webhook?: WebhookFlags;
  /** Positional arguments: operator files (`kopf run app.py`), each a module whose exported operators are hosted. */
  files: string[];
  /** `--standalone` (Kopf's): accepted and ignored, since the hub never peers with other hubs unless asked. */
  standalone: boolean;
}

/** `command-line`: the clusters the command line defines (the default); `all`: every registered cluster too. */
export type ReadinessClusters = "command-line" | "all";

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

/**
 * The protected port: `--metrics-bind-address HOST:PORT` serves /metrics and /status there only, every request
 * authenticated (TokenReview) and authorised (SubjectAccessReview) in the home cluster. Port 0 picks a free port.
 */
export interface MetricsServingFlags {
  hostname: string;
  port: number;
  /** `--metrics-secure`: HTTPS (default) or plain HTTP for local use. */
  secure: boolean;
  /** `--tls-cert-file` / `--tls-private-key-file`: PEM files re-read when rotated; absent: a self-signed one. */
  tls?: { certFile: string; keyFile: string };
}

/** `--webhook-bind-address` and friends; undefined without it (admission off, the default). */
export interface WebhookFlags {
  hostname: string;
  port: number;
  /** `--webhook-cert-dir`: tls.crt, tls.key and ca.crt (cert-manager's Secret), re-read when they change. */
  certDir?: string;
  /** `--webhook-url`: the base URL remote apiservers reach the hub at. */
  url?: string;
  /** `--webhook-service NS/NAME[:PORT]`: the Service the home cluster's apiserver reaches the hub through. */
  service?: { namespace: string; name: string; port: number };
  /** `--webhook-name`: keeps two hubs' configurations apart. Default `default`. */
  name: string;
  /** `--webhook-cert-lifetime SECONDS`: the self-made serving certificate's lifetime. Default 30 days. */
  certLifetimeMs: number;
}

/** `--cluster-api` and `--cluster-name-prefix`. */
export interface ClusterProviderFlags {
  /** `--cluster-api`: namespaces of the home cluster whose Cluster API `Cluster`s register clusters; `["*"]` = all. */
  clusterApi?: string[];
  /** `--cluster-name-prefix`: each provider's name prefix. */
  namePrefixes: NamePrefixes;
}

/** `--cluster-profiles` and `--clusterprofile-provider-file`; undefined when `--cluster-profiles` is not given. */
export interface ClusterProfileFlags {
  /** Namespaces of the home cluster, or [`*`] for all. */
  namespaces: string[];
  providerFile: string;
}

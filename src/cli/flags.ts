// Command-line flags of the hub: the options table, parsing and the checks across flag groups. Pure: main.ts passes
// Deno.args in. Each group's own parsing, checks and --help section live beside it (leader_election_flags.ts,
// shard_flags.ts, metrics_serving_flags.ts, liveness_flag.ts, limit_flags.ts); the help text is flags_help.ts.

import {
  CLUSTER_PROFILE_OPTIONS,
  type ClusterProfileFlags,
  parseClusterProfileFlags,
} from "./cluster_profile_flags.ts";
import { parseArgs } from "node:util";
import type { HubLimits } from "../hub/mod.ts";
import { BUILT_IN_OPERATORS } from "../operators/mod.ts";
import { commaList, DNS_LABEL, FlagError, type FlagValues, positiveSeconds } from "./flag_values.ts";
import { CREDENTIAL_OPTIONS, parseCredentialFlags } from "./credential_flags.ts";
import {
  CLUSTER_PROVIDER_OPTIONS,
  type ClusterProviderFlags,
  parseClusterProviderFlags,
} from "./cluster_provider_flags.ts";
import type { CredentialPolicy } from "../kube/mod.ts";
import { didYouMean } from "./flags_help.ts";
import { LEADER_ELECTION_OPTIONS, type LeaderElectionFlags, parseLeaderElection } from "./leader_election_flags.ts";
import { isNegativeLimit, LIMIT_OPTIONS, parseLimits } from "./limit_flags.ts";
import { type LivenessFlag, parseLiveness } from "./liveness_flag.ts";
import { MIRROR_OPTIONS, parseMirrorNamespaces } from "./mirror_flags.ts";
import { parseReadinessClusters, READINESS_OPTIONS, type ReadinessClusters } from "./readiness_flag.ts";
import {
  isBareMetricsSecure,
  METRICS_SERVING_OPTIONS,
  type MetricsServingFlags,
  parseMetricsServing,
} from "./metrics_serving_flags.ts";
import { parseShardFlags, SHARD_OPTIONS, ShardFlagError, type ShardFlags } from "./shard_flags.ts";
import { parseWebhookFlags, WEBHOOK_OPTIONS, type WebhookFlags } from "./webhook_flags.ts";
import { LOG_LEVELS, type LogFormat, type LogLevel } from "../util/mod.ts";

// The names importers use, from where they live now.
export { FlagError } from "./flag_values.ts";
export { didYouMean, helpText } from "./flags_help.ts";
export { LEADER_ELECTION_DEFAULTS, type LeaderElectionFlags } from "./leader_election_flags.ts";
export { parseLiveness } from "./liveness_flag.ts";
export { type MetricsServingFlags, parseBindAddress } from "./metrics_serving_flags.ts";

export interface HubFlags {
  help: boolean;
  version: boolean;
  clusters: string[];
  kubeconfigs: string[];
  namespaces: string[];
  liveness?: LivenessFlag;
  /** `--readiness-clusters` (readiness_flag.ts): which registered clusters hold /readyz back. */
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
  /** `--leader-elect*` (leader_election_flags.ts). */
  leaderElection: LeaderElectionFlags;
  /** `--shard*` (shard_flags.ts). */
  shard: ShardFlags;
  /** `--cluster-dir DIR`: a folder of kubeconfig files, watched. Default: `./clusters` unless --kubeconfig is given. */
  clusterDir?: string;
  /** `--cluster-secrets NAMESPACE`: watch labelled kubeconfig Secrets in this namespace of the home cluster. */
  clusterSecrets?: string;
  /** `--cluster-api` and `--cluster-name-prefix` (cluster_provider_flags.ts). */
  clusterProviders: ClusterProviderFlags;
  /** `--cluster-profiles`, `--clusterprofile-provider-file` (cluster_profile_flags.ts); unset without them. */
  clusterProfiles?: ClusterProfileFlags;
  /** `--exec-plugin-allowlist`, `--allow-http-servers` (credential_flags.ts): what untrusted kubeconfigs may hold. */
  credentialPolicy: CredentialPolicy;
  /** `--metrics-bind-address` and friends (metrics_serving_flags.ts); undefined without it. */
  metricsServing?: MetricsServingFlags;
  /** `--webhook-bind-address` and friends (webhook_flags.ts); undefined without it (admission off). */
  webhook?: WebhookFlags;
  /** Positional arguments: operator files (`kopf run app.py`), each a module whose exported operators are hosted. */
  files: string[];
  /** `--standalone` (Kopf's): accepted and ignored, since the hub never peers with other hubs unless asked. */
  standalone: boolean;
}

/** Every flag parseFlags() accepts: node:util parseArgs's options table (helpText() documents exactly these). */
export const HUB_OPTIONS = {
  help: { type: "boolean", short: "h" },
  version: { type: "boolean" },
  clusters: { type: "string", multiple: true },
  kubeconfig: { type: "string", multiple: true },
  namespace: { type: "string", multiple: true, short: "n" },
  "all-namespaces": { type: "boolean", short: "A" },
  standalone: { type: "boolean" },
  verbose: { type: "boolean" },
  debug: { type: "boolean" },
  quiet: { type: "boolean" },
  liveness: { type: "string" },
  ...READINESS_OPTIONS,
  "log-level": { type: "string" },
  "log-format": { type: "string" },
  "event-level": { type: "string" },
  "service-account-dir": { type: "string" },
  "home-cluster": { type: "string" },
  "cluster-dir": { type: "string" },
  "cluster-secrets": { type: "string" },
  http2: { type: "boolean" },
  "mirror-orphan-on-unreachable-after": { type: "string" },
  ...MIRROR_OPTIONS,
  "cleanup-on-remove": { type: "boolean" },
  operators: { type: "string", multiple: true },
  ...LEADER_ELECTION_OPTIONS,
  ...METRICS_SERVING_OPTIONS,
  ...WEBHOOK_OPTIONS,
  ...SHARD_OPTIONS,
  ...LIMIT_OPTIONS,
  ...CREDENTIAL_OPTIONS,
  ...CLUSTER_PROVIDER_OPTIONS,
  ...CLUSTER_PROFILE_OPTIONS,
} as const;

/** `--qps -5` → `--qps=-5` (so a negative limit gets "must be positive", not "ambiguous"); bare `--metrics-secure`. */
function normalizeArgv(argv: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    if (isNegativeLimit(argv[i], argv[i + 1])) out.push(`${argv[i]}=${argv[++i]}`);
    else if (isBareMetricsSecure(argv[i], argv[i + 1])) out.push(`${argv[i]}=true`);
    else out.push(argv[i]);
  }
  return out;
}

/** Parses argv. Throws FlagError naming the flag, the value seen and the valid choices. */
export function parseFlags(argv: string[]): HubFlags {
  let values: FlagValues;
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({
      args: normalizeArgv(argv),
      strict: true,
      allowPositionals: true,
      options: HUB_OPTIONS,
    }));
  } catch (err) {
    const first = (err as Error).message.split("\n")[0];
    const unknown = first.match(/^Unknown option '(--?[^']+)'/)?.[1];
    const guess = unknown ? didYouMean(unknown) : undefined;
    if (unknown) {
      throw new FlagError(`unknown flag ${unknown}${guess ? `: did you mean ${guess}?` : ""} (see --help)`);
    }
    throw new FlagError(`${first.replace(/\. To specify a positional argument.*$/, "")} (see --help)`);
  }
  const help = values.help === true;
  const version = values.version === true;
  const clusters = commaList(values.clusters);
  if (!help && !version && clusters.length === 0) {
    throw new FlagError("--clusters is required: name kubeconfig contexts, `all` or `in-cluster` (see --help)");
  }
  const operators = values.operators === undefined ? undefined : commaList(values.operators);
  if (operators) {
    const valid = Object.keys(BUILT_IN_OPERATORS);
    const none = operators.length === 1 && operators[0] === "none";
    const unknown = operators.find((o) => !valid.includes(o));
    if (!none && (operators.length === 0 || unknown !== undefined)) {
      throw new FlagError(
        `invalid --operators "${unknown ?? ""}": choose from ${valid.join(", ")}, comma-separated, or \`none\``,
      );
    }
    if (none) operators.length = 0;
  }
  const kopfLevels = (["verbose", "debug", "quiet"] as const).filter((f) => values[f] === true);
  if (kopfLevels.length > 1 || (kopfLevels.length && values["log-level"] !== undefined)) {
    throw new FlagError(
      `conflicting log levels: ${
        [...kopfLevels.map((f) => `--${f}`), ...(values["log-level"] !== undefined ? ["--log-level"] : [])].join(", ")
      }: give one`,
    );
  }
  const kopfLevel = kopfLevels[0] === "quiet" ? "warn" : kopfLevels[0] ? "debug" : undefined;
  const logLevel = (values["log-level"] as string | undefined) ?? kopfLevel ?? "info";
  if (!LOG_LEVELS.includes(logLevel as LogLevel)) {
    throw new FlagError(`invalid --log-level "${logLevel}": choose one of ${LOG_LEVELS.join(", ")}`);
  }
  const logFormat = (values["log-format"] as string | undefined) ?? "json";
  if (logFormat !== "json" && logFormat !== "text") {
    throw new FlagError(`invalid --log-format "${logFormat}": choose json or text`);
  }
  const eventLevel = (values["event-level"] as string | undefined) ?? "Warning";
  const normalizedEvent = eventLevel.toLowerCase() === "normal"
    ? "Normal"
    : eventLevel.toLowerCase() === "warning"
    ? "Warning"
    : undefined;
  if (!normalizedEvent) throw new FlagError(`invalid --event-level "${eventLevel}": choose Normal or Warning`);
  const limits = parseLimits(values);
  const homeCluster = values["home-cluster"] as string | undefined;
  if (homeCluster !== undefined && !clusters.includes(homeCluster) && !clusters.includes("all")) {
    throw new FlagError(
      `invalid --home-cluster "${homeCluster}": it must be one of the --clusters (${clusters.join(", ")})`,
    );
  }
  const leaderElection = parseLeaderElection(values);
  if (leaderElection.cluster !== undefined && !clusters.includes(leaderElection.cluster) && !clusters.includes("all")) {
    throw new FlagError(
      `invalid --leader-elect-cluster "${leaderElection.cluster}": it must be one of the --clusters (${
        clusters.join(", ")
      })`,
    );
  }
  let shard: ShardFlags;
  try {
    shard = parseShardFlags(values);
  } catch (err) {
    if (err instanceof ShardFlagError) throw new FlagError(err.message);
    throw err;
  }
  if (shard.enabled && leaderElection.enabled) {
    throw new FlagError("--shard and --leader-elect exclude each other: sharding already gives each cluster one owner");
  }
  const clusterDir = values["cluster-dir"] as string | undefined;
  if (clusterDir !== undefined && clusterDir.trim() === "") {
    throw new FlagError(`invalid --cluster-dir "": name a folder of kubeconfig files, e.g. ./clusters`);
  }
  const clusterSecrets = values["cluster-secrets"] as string | undefined;
  if (clusterSecrets !== undefined && (clusterSecrets.length > 63 || !DNS_LABEL.test(clusterSecrets))) {
    throw new FlagError(
      `invalid --cluster-secrets "${clusterSecrets}": must be a namespace name (a lowercase DNS label)`,
    );
  }
  return {
    help,
    version,
    clusters,
    clusterDir,
    clusterSecrets,
    clusterProviders: parseClusterProviderFlags(values),
    clusterProfiles: parseClusterProfileFlags(values),
    credentialPolicy: parseCredentialFlags(values),
    kubeconfigs: commaList(values.kubeconfig),
    namespaces: allNamespaces(values),
    liveness: values.liveness === undefined ? undefined : parseLiveness(values.liveness as string),
    readinessClusters: parseReadinessClusters(values),
    logLevel: logLevel as LogLevel,
    logFormat,
    eventLevel: normalizedEvent,
    serviceAccountRoot: values["service-account-dir"] as string | undefined,
    homeCluster,
    http2: values.http2 === true,
    mirrorOrphanOnUnreachableAfterMs: positiveSeconds(values, "mirror-orphan-on-unreachable-after", 600_000),
    mirrorNamespaces: parseMirrorNamespaces(values),
    cleanupOnRemove: values["cleanup-on-remove"] === true,
    operators,
    limits,
    leaderElection,
    shard,
    metricsServing: parseMetricsServing(values),
    webhook: parseWebhookFlags(values),
    files: positionals,
    standalone: values.standalone === true,
  };
}

/** `--namespace` (repeatable) or Kopf's `-A`/`--all-namespaces` (the default), not both. */
function allNamespaces(values: FlagValues): string[] {
  const namespaces = commaList(values.namespace);
  if (values["all-namespaces"] === true && namespaces.length) {
    throw new FlagError(`--all-namespaces contradicts --namespace ${namespaces.join(",")}: give one`);
  }
  return namespaces;
}

// Command-line flags of the hub: parsing, validation and --help. Pure: main.ts passes Deno.args in.

import { parseArgs } from "node:util";
import { CONCURRENCY_PER_CLUSTER, DEFAULT_LIMITS, type HubLimits, MAX_SCALED_CONCURRENCY } from "./hub/mod.ts";
import { BUILT_IN_OPERATORS } from "./operators/mod.ts";
import { parseShardFlags, SHARD_OPTIONS, ShardFlagError, type ShardFlags, shardHelp } from "./shard_flags.ts";
import { LOG_LEVELS, type LogFormat, type LogLevel } from "./util/mod.ts";

/** A bad flag: main.ts prints the message on one line and exits with code 2. */
export class FlagError extends Error {
  override name = "FlagError";
}

export interface HubFlags {
  help: boolean;
  version: boolean;
  clusters: string[];
  kubeconfigs: string[];
  namespaces: string[];
  liveness?: { hostname: string; port: number; path: string };
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
  /** `--operators a,b`: the built-in operators to host; undefined = all, [] = none (`--operators none`). */
  operators?: string[];
  /** The limits given on the command line; the hub fills in the rest (some scale with the clusters). */
  limits: Partial<HubLimits>;
  leaderElection: LeaderElectionFlags;
  /** `--shard*` (src/shard_flags.ts). */
  shard: ShardFlags;
  /** `--cluster-dir DIR`: a folder of kubeconfig files, watched. Default: `./clusters` unless --kubeconfig is given. */
  clusterDir?: string;
  /** `--cluster-secrets NAMESPACE`: watch labelled kubeconfig Secrets in this namespace of the home cluster. */
  clusterSecrets?: string;
  /** `--metrics-bind-address` and friends; undefined without it (/metrics and /status stay on --liveness). */
  metricsServing?: MetricsServingFlags;
  /** Positional arguments: operator files (`kopf run app.py`), each a module whose exported operators are hosted. */
  files: string[];
  /** `--standalone` (Kopf's): accepted and ignored, since the hub never peers with other hubs unless asked. */
  standalone: boolean;
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

interface NumberFlag {
  key: keyof HubLimits;
  /** Flag value × scale = the limit (seconds → ms). */
  scale: number;
  integer: boolean;
  help: string;
}

/** Defaults --help explains, rather than one fixed number: those that scale with the clusters, and why. */
const DEFAULT_TEXT: Partial<Record<keyof HubLimits, string>> = {
  concurrency: `16, or ${CONCURRENCY_PER_CLUSTER} per cluster engaged beyond four, at most ${MAX_SCALED_CONCURRENCY}`,
  qps: "500 per cluster engaged: it bounds the hub's own work, not an API server's",
  burst: "1000 per cluster engaged",
  clusterQps: "200: this limit protects each API server",
};

const NUMBER_FLAGS: Record<string, NumberFlag> = {
  "concurrency": { key: "concurrency", scale: 1, integer: true, help: "reconciles running at once, all clusters" },
  "qps": { key: "qps", scale: 1, integer: false, help: "process-wide reconciles per second" },
  "burst": { key: "burst", scale: 1, integer: true, help: "process-wide reconcile burst" },
  "cluster-qps": { key: "clusterQps", scale: 1, integer: false, help: "API requests per second per cluster" },
  "cluster-burst": { key: "clusterBurst", scale: 1, integer: true, help: "API request burst per cluster" },
  "reconcile-timeout": {
    key: "reconcileTimeoutMs",
    scale: 1000,
    integer: false,
    help: "seconds before a reconcile is abandoned and retried",
  },
  "watch-idle-timeout": {
    key: "watchIdleTimeoutMs",
    scale: 1000,
    integer: false,
    help: "seconds of watch silence before the stream is reopened",
  },
  "request-timeout": { key: "requestTimeoutMs", scale: 1000, integer: false, help: "seconds per API request" },
  "drain-timeout": {
    key: "drainTimeoutMs",
    scale: 1000,
    integer: false,
    help: "seconds in-flight reconciles get on shutdown",
  },
  "max-retry-delay": {
    key: "maxRetryDelayMs",
    scale: 1000,
    integer: false,
    help: "cap of the per-object retry backoff, seconds",
  },
};

export function helpText(): string {
  const d = DEFAULT_LIMITS;
  const num = Object.entries(NUMBER_FLAGS).map(([flag, f]) =>
    `  --${flag.padEnd(22)} ${f.help} (default ${DEFAULT_TEXT[f.key] ?? d[f.key] / f.scale})`
  );
  return [
    "operator-hub: runs Kubernetes operators (built in: Uuid and Mirror) across many clusters from one process.",
    "",
    "Usage: deno task run --clusters prod,staging [flags] [OPERATOR_FILE.ts ...]",
    "",
    "Each OPERATOR_FILE is a module whose exported operators (defineOperator, defineHandlers) run beside the",
    "built-in ones, as `kopf run app.py` does; `--operators none` leaves only the files' operators.",
    "",
    "Clusters:",
    "  --clusters a,b             kubeconfig contexts to serve; `all` = every known context,",
    "                             `in-cluster` = this pod's own cluster (service account)",
    "  --kubeconfig FILE          kubeconfig to read (repeatable). Default: every clusters/*.yaml",
    "                             plus $KUBECONFIG (colon-separated) or ~/.kube/config",
    "  --cluster-dir DIR          folder of kubeconfig files (*.yaml), watched: a file added registers its",
    "                             contexts, removed unregisters them. Default ./clusters (/app/clusters in",
    "                             the image) when no --kubeconfig is given; --kubeconfig files are watched too",
    "  --cluster-secrets NS       register clusters from Secrets in namespace NS of the home cluster labelled",
    "                             sigs.k8s.io/multicluster-runtime-kubeconfig=true (data key kubeconfig;",
    "                             cluster name = Secret name)",
    "  --namespace NS, -n NS      namespace to watch (repeatable). Default: all namespaces",
    "  --all-namespaces, -A       watch all namespaces (the default; Kopf's flag, not with --namespace)",
    "  --home-cluster NAME        the cluster holding the hub's own objects (Leases, cluster Secrets, Mirror",
    "                             sources, TokenReviews); default: in-cluster if selected, else the first",
    "  --service-account-dir DIR  where in-cluster credentials live",
    "                             (default /var/run/secrets/kubernetes.io/serviceaccount)",
    `  --operators a,b            built-in operators to run: ${
      Object.keys(BUILT_IN_OPERATORS).join(", ")
    }; \`none\` = none`,
    "                             (default: all of them; Mirrors live in the home cluster only)",
    "  --http2                    offer HTTP/2 to the API servers (default: HTTP/1.1 keep-alive,",
    "                             about a third less CPU per request here; see README)",
    "  --mirror-orphan-on-unreachable-after SECONDS",
    "                             a deleted Mirror's finalizer gives up on the copy in a target",
    "                             unreachable this long, with a Warning Event (default 600)",
    "",
    "Leader election (off by default; replicas that do not lead keep watching but do not reconcile):",
    "  --leader-elect             elect one reconciling replica through a coordination.k8s.io/v1 Lease",
    `  --leader-elect-id NAME     the Lease's name (default ${LEADER_ELECTION_DEFAULTS.id})`,
    "  --leader-elect-namespace NS",
    "                             the Lease's namespace (default: the pod's own in-cluster, else the",
    "                             Lease cluster's context namespace, else default)",
    "  --leader-elect-cluster NAME",
    "                             the cluster holding the Lease (default: the home cluster)",
    "  --leader-elect-lease-duration SECONDS",
    `                             how long a standby waits after the last renewal it saw (default ${
      LEADER_ELECTION_DEFAULTS.leaseDurationMs / 1000
    })`,
    "  --leader-elect-renew-deadline SECONDS",
    `                             how long the leader retries renewing before it stops leading (default ${
      LEADER_ELECTION_DEFAULTS.renewDeadlineMs / 1000
    })`,
    "  --leader-elect-retry-period SECONDS",
    `                             pause between attempts to acquire or renew (default ${
      LEADER_ELECTION_DEFAULTS.retryPeriodMs / 1000
    })`,
    "",
    ...shardHelp(),
    "",
    "Health:",
    "  --liveness URL             serve /healthz, /readyz, /status and /metrics on URL's host and port,",
    "                             Kopf's form, e.g. http://0.0.0.0:8080/healthz. Default: not served",
    "                             (with --metrics-bind-address, only /healthz and /readyz stay here)",
    "",
    "Protected metrics and status (kubebuilder's defaults; see README):",
    "  --metrics-bind-address HOST:PORT",
    "                             serve /metrics and /status there only, e.g. :8443, each request checked",
    "                             by a TokenReview and a SubjectAccessReview (get on the path) in the home",
    "                             cluster; --liveness then keeps just /healthz and /readyz",
    "  --metrics-secure=true|false",
    "                             HTTPS (default true) or plain HTTP for local use",
    "  --tls-cert-file FILE       PEM certificate for the protected port, re-read when it changes",
    "  --tls-private-key-file FILE",
    "                             its PEM private key. Without both: a self-signed certificate made at start",
    "",
    "Logs and events:",
    `  --log-level LEVEL          ${LOG_LEVELS.join("|")} (default info)`,
    "  --verbose, --debug         Kopf's flags: --log-level debug",
    "  --quiet                    Kopf's flag: --log-level warn",
    "  --log-format FORMAT        json|text (default json)",
    "  --event-level LEVEL        post Kubernetes Events at or above Normal|Warning (default Warning)",
    "",
    "Limits (all optional):",
    ...num,
    "",
    "  --standalone               Kopf's flag, accepted: the hub never peers with other hubs unless asked",
    "  --help                     show this help",
    "  --version                  show the version",
    "",
    "Exit codes: 0 after a clean shutdown (SIGTERM/SIGINT), 1 on a crash, 2 on bad flags or kubeconfigs.",
  ].join("\n");
}

/** `--qps -5` → `--qps=-5`, so a negative limit gets the "must be positive" error, not "ambiguous". */
function joinNegativeNumbers(argv: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i].startsWith("--") ? argv[i].slice(2) : "";
    if (flag in NUMBER_FLAGS && /^-\d/.test(argv[i + 1] ?? "")) out.push(`${argv[i]}=${argv[++i]}`);
    // A bare `--metrics-secure` means true, as Go's boolean flags do.
    else if (flag === "metrics-secure" && !/^(true|false)$/i.test(argv[i + 1] ?? "")) out.push(`${argv[i]}=true`);
    else out.push(argv[i]);
  }
  return out;
}

/** Parses argv. Throws FlagError naming the flag, the value seen and the valid choices. */
export function parseFlags(argv: string[]): HubFlags {
  const numberOptions = Object.fromEntries(Object.keys(NUMBER_FLAGS).map((k) => [k, { type: "string" as const }]));
  let values: Record<string, string | string[] | boolean | undefined>;
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({
      args: joinNegativeNumbers(argv),
      strict: true,
      allowPositionals: true,
      options: {
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
        "log-level": { type: "string" },
        "log-format": { type: "string" },
        "event-level": { type: "string" },
        "service-account-dir": { type: "string" },
        "home-cluster": { type: "string" },
        "cluster-dir": { type: "string" },
        "cluster-secrets": { type: "string" },
        http2: { type: "boolean" },
        "mirror-orphan-on-unreachable-after": { type: "string" },
        operators: { type: "string", multiple: true },
        "leader-elect": { type: "boolean" },
        "leader-elect-id": { type: "string" },
        "leader-elect-namespace": { type: "string" },
        "leader-elect-cluster": { type: "string" },
        "leader-elect-lease-duration": { type: "string" },
        "leader-elect-renew-deadline": { type: "string" },
        "leader-elect-retry-period": { type: "string" },
        "metrics-bind-address": { type: "string" },
        "metrics-secure": { type: "string" },
        "tls-cert-file": { type: "string" },
        "tls-private-key-file": { type: "string" },
        ...SHARD_OPTIONS,
        ...numberOptions,
      },
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
  const list = (v: unknown) =>
    ((v as string[] | undefined) ?? []).flatMap((s) => s.split(",")).map((s) => s.trim()).filter(Boolean);
  const clusters = list(values.clusters);
  if (!help && !version && clusters.length === 0) {
    throw new FlagError("--clusters is required: name kubeconfig contexts, `all` or `in-cluster` (see --help)");
  }
  const operators = values.operators === undefined ? undefined : list(values.operators);
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
  const limits: Partial<HubLimits> = {};
  for (const [flag, f] of Object.entries(NUMBER_FLAGS)) {
    const raw = values[flag] as string | undefined;
    if (raw === undefined) continue;
    const n = Number(raw);
    if (raw.trim() === "" || !Number.isFinite(n) || n <= 0 || (f.integer && !Number.isInteger(n))) {
      throw new FlagError(`invalid --${flag} "${raw}": must be a positive ${f.integer ? "whole " : ""}number`);
    }
    limits[f.key] = n * f.scale;
  }
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
    kubeconfigs: list(values.kubeconfig),
    namespaces: allNamespaces(values),
    liveness: values.liveness === undefined ? undefined : parseLiveness(values.liveness as string),
    logLevel: logLevel as LogLevel,
    logFormat,
    eventLevel: normalizedEvent,
    serviceAccountRoot: values["service-account-dir"] as string | undefined,
    homeCluster,
    http2: values.http2 === true,
    mirrorOrphanOnUnreachableAfterMs: positiveSeconds(values, "mirror-orphan-on-unreachable-after", 600_000),
    operators,
    limits,
    leaderElection,
    shard,
    metricsServing: parseMetricsServing(values),
    files: positionals,
    standalone: values.standalone === true,
  };
}

/** `--namespace` (repeatable) or Kopf's `-A`/`--all-namespaces` (the default), not both. */
function allNamespaces(values: Record<string, unknown>): string[] {
  const namespaces = ((values.namespace as string[] | undefined) ?? []).flatMap((s) => s.split(","))
    .map((s) => s.trim()).filter(Boolean);
  if (values["all-namespaces"] === true && namespaces.length) {
    throw new FlagError(`--all-namespaces contradicts --namespace ${namespaces.join(",")}: give one`);
  }
  return namespaces;
}

/** The known long flag closest to a misspelled one (edit distance ≤ 2, or a prefix either way), if any. */
export function didYouMean(flag: string): string | undefined {
  const name = flag.replace(/^-+/, "").split("=")[0];
  // --help documents exactly the accepted flags (src/flags_test.ts checks it), in a sensible order.
  const known = [...new Set([...helpText().matchAll(/--([a-z][a-z0-9-]*)/g)].map((m) => m[1]))];
  let best: { flag: string; score: number } | undefined;
  for (const k of known) {
    const score = k.startsWith(name) || name.startsWith(k) ? 1 : editDistance(name, k);
    if (score <= 2 && (!best || score < best.score)) best = { flag: k, score };
  }
  return best ? `--${best.flag}` : undefined;
}

function editDistance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0];
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const next = Math.min(row[j] + 1, row[j - 1] + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = row[j];
      row[j] = next;
    }
  }
  return row[b.length];
}

/** `--metrics-bind-address`, `--metrics-secure`, `--tls-cert-file`, `--tls-private-key-file` (see MetricsServingFlags). */
function parseMetricsServing(values: Record<string, unknown>): MetricsServingFlags | undefined {
  const bind = values["metrics-bind-address"] as string | undefined;
  const secureRaw = values["metrics-secure"] as string | undefined;
  const certFile = values["tls-cert-file"] as string | undefined;
  const keyFile = values["tls-private-key-file"] as string | undefined;
  if (bind === undefined) {
    const stray = [
      ["--metrics-secure", secureRaw],
      ["--tls-cert-file", certFile],
      ["--tls-private-key-file", keyFile],
    ].find(([, v]) => v !== undefined);
    if (stray) throw new FlagError(`${stray[0]} needs --metrics-bind-address HOST:PORT (e.g. :8443)`);
    return undefined;
  }
  if (secureRaw !== undefined && !/^(true|false)$/i.test(secureRaw)) {
    throw new FlagError(`invalid --metrics-secure "${secureRaw}": choose true or false`);
  }
  const secure = secureRaw === undefined || secureRaw.toLowerCase() === "true";
  if ((certFile === undefined) !== (keyFile === undefined)) {
    throw new FlagError(
      "--tls-cert-file and --tls-private-key-file go together: give both, or neither for a self-signed one",
    );
  }
  if (certFile !== undefined && !secure) {
    throw new FlagError("--tls-cert-file needs --metrics-secure=true: plain HTTP serves no certificate");
  }
  for (const [flag, v] of [["--tls-cert-file", certFile], ["--tls-private-key-file", keyFile]]) {
    if (v !== undefined && v.trim() === "") throw new FlagError(`invalid ${flag} "": name a PEM file`);
  }
  return { ...parseBindAddress(bind), secure, ...(certFile ? { tls: { certFile, keyFile: keyFile! } } : {}) };
}

/** Parses controller-runtime's `HOST:PORT` form: `:8443`, `0.0.0.0:8443`, `[::]:8443`, `localhost:8443`. */
export function parseBindAddress(raw: string): { hostname: string; port: number } {
  const m = raw.match(/^(?:\[([0-9a-fA-F:.]+)\]|([^:\[\]\s]*)):(\d{1,5})$/);
  const port = m ? Number(m[3]) : NaN;
  if (!m || port > 65535) {
    throw new FlagError(
      `invalid --metrics-bind-address "${raw}": expected HOST:PORT, e.g. :8443, 127.0.0.1:8443 or [::]:8443`,
    );
  }
  return { hostname: m[1] ?? (m[2] || "0.0.0.0"), port };
}

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** A flag of positive seconds, in ms; `fallbackMs` when absent. */
function positiveSeconds(values: Record<string, unknown>, flag: string, fallbackMs: number): number {
  const raw = values[flag] as string | undefined;
  if (raw === undefined) return fallbackMs;
  const n = Number(raw);
  if (raw.trim() === "" || !Number.isFinite(n) || n <= 0) {
    throw new FlagError(`invalid --${flag} "${raw}": must be a positive number of seconds`);
  }
  return Math.round(n * 1000);
}

function parseLeaderElection(values: Record<string, unknown>): LeaderElectionFlags {
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

/** Parses Kopf's `--liveness http://HOST:PORT/PATH` form. */
export function parseLiveness(raw: string): { hostname: string; port: number; path: string } {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new FlagError(`invalid --liveness "${raw}": expected a URL like http://0.0.0.0:8080/healthz`);
  }
  if (url.protocol !== "http:") {
    throw new FlagError(`invalid --liveness "${raw}": only http:// is served, e.g. http://0.0.0.0:8080/healthz`);
  }
  if (url.username || url.password || url.search || url.hash) {
    throw new FlagError(`invalid --liveness "${raw}": no credentials, query or fragment allowed`);
  }
  const port = url.port === "" ? 80 : Number(url.port);
  const hostname = url.hostname.replace(/^\[(.*)\]$/, "$1");
  return { hostname, port, path: url.pathname };
}

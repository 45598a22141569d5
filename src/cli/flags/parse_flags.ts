// Parses the hub's command line: node:util parseArgs over the flag table's options, each flag read and checked by its
// row (flag_table.ts), then the checks across flags, into HubFlags (hub_flags.ts). Pure: main.ts passes Deno.args in.

import { parseArgs } from "node:util";
import type { HubLimits } from "../../hub/hub_limits.ts";
import type { Flag } from "./flag_spec.ts";
import { type FlagName, type FlagReadings, FLAGS } from "./flag_table.ts";
import { commaList, FlagError } from "./flag_values.ts";
import { didYouMean } from "./help_text.ts";
import type { HubFlags, LeaderElectionFlags, MetricsServingFlags, ShardFlags, WebhookFlags } from "./hub_flags.ts";

/** client-go's JitterFactor: the renew deadline must exceed retryPeriod × this. */
const JITTER_FACTOR = 1.2;

type ParseArgsOption = { type: "boolean" | "string"; multiple?: boolean; short?: string };

const ROWS = Object.entries(FLAGS) as [FlagName, Flag<unknown>][];

/** node:util parseArgs's options, made from the table: every flag parseFlags() accepts. */
export const PARSE_ARGS_OPTIONS: Record<string, ParseArgsOption> = Object.fromEntries(
  ROWS.map(([name, f]) => [name, {
    type: f.kind === "boolean" ? "boolean" : "string",
    ...(f.kind === "list" ? { multiple: true } : {}),
    ...(f.short ? { short: f.short } : {}),
  }]),
);

/**
 * Parses argv.
 *
 * Guarantees: throws FlagError, one line naming the flag, the value seen and what is valid, for an unknown flag (with
 * a did-you-mean), a missing --clusters (unless --help or --version), a value its row refuses, a flag given without
 * the one it is part of, and flags that contradict each other. The checks run in the order below: with several
 * problems, the first one found is the one reported.
 */
export function parseFlags(argv: string[]): HubFlags {
  const { values, positionals } = tokenize(argv);
  const read = reader(values);
  const clusters = read("clusters");
  if (!read("help") && !read("version") && clusters.length === 0) {
    throw new FlagError("--clusters is required: name kubeconfig contexts, `all` or `in-cluster` (see --help)");
  }
  const operators = read("operators");
  const logLevel = chooseLogLevel(read, values);
  const logFormat = read("log-format");
  const eventLevel = read("event-level");
  const limits: Partial<HubLimits> = {};
  for (const [name, f] of ROWS) {
    const limit = f.limit && read(name);
    if (f.limit && limit !== undefined) limits[f.limit] = limit as number;
  }
  const homeCluster = oneOfClusters("home-cluster", read("home-cluster"), clusters);
  const leaderElection = leaderElectionOf(read);
  oneOfClusters("leader-elect-cluster", leaderElection.cluster, clusters);
  const shard = shardOf(read, values);
  if (shard.enabled && leaderElection.enabled) {
    throw new FlagError("--shard and --leader-elect exclude each other: sharding already gives each cluster one owner");
  }
  const clusterDir = read("cluster-dir");
  const clusterSecrets = read("cluster-secrets");
  return {
    help: read("help"),
    version: read("version"),
    clusters,
    clusterDir,
    clusterSecrets,
    clusterProviders: { clusterApi: read("cluster-api"), namePrefixes: read("cluster-name-prefix") },
    clusterProfiles: clusterProfilesOf(read, values),
    credentialPolicy: { execAllowlist: read("exec-plugin-allowlist"), allowHttpServers: read("allow-http-servers") },
    kubeconfigs: read("kubeconfig"),
    namespaces: namespacesOf(read),
    liveness: read("liveness"),
    readinessClusters: read("readiness-clusters"),
    logLevel,
    logFormat,
    eventLevel,
    serviceAccountRoot: read("service-account-dir"),
    homeCluster,
    http2: read("http2"),
    checkReads: read("check-reads"),
    mirrorOrphanOnUnreachableAfterMs: read("mirror-orphan-on-unreachable-after"),
    mirrorNamespaces: read("mirror-namespaces"),
    cleanupOnRemove: read("cleanup-on-remove"),
    operators,
    limits,
    leaderElection,
    shard,
    metricsServing: metricsServingOf(read, values),
    webhook: webhookOf(read, values),
    files: positionals,
    standalone: read("standalone"),
  };
}

/** What parseArgs saw: each flag's value(s), `undefined` for a flag not given. */
type Given = Record<string, unknown>;

/** Reads one flag through its row: the value seen, or the row's default, checked and converted by its `read`. */
type Read = <K extends FlagName>(name: K) => FlagReadings[K];

function reader(values: Given): Read {
  return <K extends FlagName>(name: K): FlagReadings[K] => {
    const f: Flag<unknown> = FLAGS[name];
    const raw = values[name];
    const seen = f.kind === "list" ? (raw === undefined ? undefined : commaList(raw as string[])) : raw ?? f.default;
    return (f.read as (raw: unknown, name: string) => unknown)(seen, name) as FlagReadings[K];
  };
}

/** "--X needs --FLAG": the first flag given (in the table's order) whose row needs `flag`, which is not given. */
function checkNeeds(values: Given, flag: FlagName): void {
  if (values[flag] !== undefined) return;
  for (const [name, f] of ROWS) {
    if (f.needs?.flag === flag && values[name] !== undefined) {
      throw new FlagError(`--${name} needs --${flag}${f.needs.hint ? ` ${f.needs.hint}` : ""}`);
    }
  }
}

/** A cluster the hub's own objects live in must be one of the --clusters (or `--clusters all`). */
function oneOfClusters(flag: FlagName, value: string | undefined, clusters: string[]): string | undefined {
  if (value !== undefined && !clusters.includes(value) && !clusters.includes("all")) {
    throw new FlagError(`invalid --${flag} "${value}": it must be one of the --clusters (${clusters.join(", ")})`);
  }
  return value;
}

/** node:util parseArgs over the table's options; its errors become one-line FlagErrors. */
function tokenize(argv: string[]): { values: Record<string, unknown>; positionals: string[] } {
  try {
    return parseArgs({ args: normalizeArgv(argv), strict: true, allowPositionals: true, options: PARSE_ARGS_OPTIONS });
  } catch (err) {
    const first = (err as Error).message.split("\n")[0];
    const unknown = first.match(/^Unknown option '(--?[^']+)'/)?.[1];
    if (unknown) {
      const guess = didYouMean(unknown);
      throw new FlagError(`unknown flag ${unknown}${guess ? `: did you mean ${guess}?` : ""} (see --help)`);
    }
    throw new FlagError(`${first.replace(/\. To specify a positional argument.*$/, "")} (see --help)`);
  }
}

/**
 * `--qps -5` → `--qps=-5` for a `signed` row (so a negative limit gets "must be positive", not "ambiguous"); a bare
 * `bareTrue` flag (`--metrics-secure` not followed by true or false) → `--metrics-secure=true`.
 */
function normalizeArgv(argv: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const row: Flag<unknown> | undefined = argv[i].startsWith("--")
      ? (FLAGS as Record<string, Flag<unknown>>)[argv[i].slice(2)]
      : undefined;
    const next = argv[i + 1] ?? "";
    if (row?.signed && /^-\d/.test(next)) out.push(`${argv[i]}=${argv[++i]}`);
    else if (row?.bareTrue && !/^(true|false)$/i.test(next)) out.push(`${argv[i]}=true`);
    else out.push(argv[i]);
  }
  return out;
}

/** `--log-level`, or Kopf's `--verbose`/`--debug`/`--quiet`: one of them at most; `info` without any. */
function chooseLogLevel(read: Read, values: Given): HubFlags["logLevel"] {
  const kopf = (["verbose", "debug", "quiet"] as const).filter((f) => read(f));
  const level = values["log-level"] !== undefined ? ["--log-level"] : [];
  if (kopf.length > 1 || (kopf.length && level.length)) {
    throw new FlagError(`conflicting log levels: ${[...kopf.map((f) => `--${f}`), ...level].join(", ")}: give one`);
  }
  return read("log-level") ?? (kopf[0] === "quiet" ? "warn" : kopf[0] ? "debug" : "info");
}

/** `--leader-elect*`, with client-go's checks of the timings against each other (naming both flags). */
function leaderElectionOf(read: Read): LeaderElectionFlags {
  const leaseDurationMs = read("leader-elect-lease-duration");
  const renewDeadlineMs = read("leader-elect-renew-deadline");
  const retryPeriodMs = read("leader-elect-retry-period");
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
  return {
    enabled: read("leader-elect"),
    id: read("leader-elect-id"),
    namespace: read("leader-elect-namespace"),
    cluster: read("leader-elect-cluster"),
    leaseDurationMs,
    renewDeadlineMs,
    retryPeriodMs,
  };
}

/** `--shard*`, with the peer Lease's timings checked against each other; the other shard flags need --shard. */
function shardOf(read: Read, values: Given): ShardFlags {
  const leaseDurationMs = read("shard-lease-duration");
  const renewDeadlineMs = read("shard-renew-deadline");
  const renewPeriodMs = read("shard-renew-period");
  const weight = read("shard-weight");
  if (leaseDurationMs % 1000 !== 0) {
    throw new FlagError(`invalid --shard-lease-duration ${leaseDurationMs / 1000}: a Lease holds whole seconds`);
  }
  if (leaseDurationMs <= renewDeadlineMs) {
    throw new FlagError(
      `invalid --shard-lease-duration ${leaseDurationMs / 1000}: it must be greater than --shard-renew-deadline (${
        renewDeadlineMs / 1000
      })`,
    );
  }
  if (renewDeadlineMs <= renewPeriodMs * 2) {
    throw new FlagError(
      `invalid --shard-renew-deadline ${renewDeadlineMs / 1000}: it must be greater than 2 × --shard-renew-period (${
        (renewPeriodMs * 2) / 1000
      })`,
    );
  }
  const id = read("shard-id");
  checkNeeds(values, "shard");
  return {
    enabled: read("shard"),
    id,
    warm: read("shard-warm"),
    weight,
    leaseDurationMs,
    renewDeadlineMs,
    renewPeriodMs,
  };
}

/** `--cluster-profiles` with the provider file it needs; undefined without it. */
function clusterProfilesOf(read: Read, values: Given): HubFlags["clusterProfiles"] {
  checkNeeds(values, "cluster-profiles");
  const namespaces = read("cluster-profiles");
  if (namespaces === undefined) return undefined;
  const file = read("clusterprofile-provider-file");
  if (file === undefined || file.trim() === "") {
    throw new FlagError(
      "--cluster-profiles needs --clusterprofile-provider-file FILE: the exec plugin for each access provider",
    );
  }
  return { namespaces, providerFile: file };
}

/** `--namespace` (repeatable) or Kopf's `-A`/`--all-namespaces` (the default), not both. */
function namespacesOf(read: Read): string[] {
  const namespaces = read("namespace");
  if (read("all-namespaces") && namespaces.length) {
    throw new FlagError(`--all-namespaces contradicts --namespace ${namespaces.join(",")}: give one`);
  }
  return namespaces;
}

/** The protected port; undefined without `--metrics-bind-address`. The TLS files go in pairs, over HTTPS only. */
function metricsServingOf(read: Read, values: Given): MetricsServingFlags | undefined {
  checkNeeds(values, "metrics-bind-address");
  if (values["metrics-bind-address"] === undefined) return undefined;
  const secure = read("metrics-secure");
  if ((values["tls-cert-file"] === undefined) !== (values["tls-private-key-file"] === undefined)) {
    throw new FlagError(
      "--tls-cert-file and --tls-private-key-file go together: give both, or neither for a self-signed one",
    );
  }
  if (values["tls-cert-file"] !== undefined && !secure) {
    throw new FlagError("--tls-cert-file needs --metrics-secure=true: plain HTTP serves no certificate");
  }
  const certFile = read("tls-cert-file");
  const keyFile = read("tls-private-key-file");
  return { ...read("metrics-bind-address")!, secure, ...(certFile ? { tls: { certFile, keyFile: keyFile! } } : {}) };
}

/** The admission port; undefined without `--webhook-bind-address` (admission off). */
function webhookOf(read: Read, values: Given): WebhookFlags | undefined {
  checkNeeds(values, "webhook-bind-address");
  const bind = read("webhook-bind-address");
  if (bind === undefined) return undefined;
  const certDir = read("webhook-cert-dir");
  const url = read("webhook-url");
  const service = read("webhook-service");
  const name = read("webhook-name");
  const certLifetimeMs = read("webhook-cert-lifetime");
  if (certDir !== undefined && values["webhook-cert-lifetime"] !== undefined) {
    throw new FlagError("--webhook-cert-lifetime applies to the hub's own certificate: not with --webhook-cert-dir");
  }
  return {
    ...bind,
    ...(certDir !== undefined ? { certDir } : {}),
    ...(url !== undefined ? { url } : {}),
    ...(service ? { service } : {}),
    name,
    certLifetimeMs,
  };
}

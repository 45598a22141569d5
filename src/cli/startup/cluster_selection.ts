// main()'s cluster step: the registered clusters the flags select, the home cluster, and the leader-election Lease.

import { dirname, resolve } from "node:path";
import type { HubLeaderElection } from "../../hub/mod.ts";
import { loadRegisteredClusters, type RegisteredClusters } from "../../hub/providers/registered_clusters.ts";
import { type ClusterAccess, ConfigError, IN_CLUSTER } from "../../kube/mod.ts";
import type { Logger } from "../../util/mod.ts";
import type { HubFlags, MetricsServingFlags } from "../flags/hub_flags.ts";
import { granted, hostname, netHost, PermissionError, readEnv, requireNet } from "../permissions.ts";
import { UsageError } from "../usage_error.ts";

/** What the hub runs on, as the flags chose it. */
export interface ClusterSelection {
  /** The registry (folder, `--kubeconfig` files, `in-cluster`) and its folder provider, not started yet. */
  registered: RegisteredClusters;
  /** The clusters selected and registered now. */
  selected: ClusterAccess[];
  /** Holds the hub's own objects (see `homeCluster`); undefined when nothing selected is registered yet. */
  home: ClusterAccess | undefined;
  /** The Lease of `--leader-elect`; undefined without it. */
  leaderElection: HubLeaderElection | undefined;
}

/**
 * Loads the registered clusters the flags select and settles the home cluster and leader election.
 *
 * Guarantees: everything the user must fix throws UsageError with one line, before any cluster is contacted or any
 * port opened: an unknown context, a missing or invalid kubeconfig, a Deno permission missing for a cluster, a
 * proxy, a port or a TLS file (naming the flag to add), a bad `--home-cluster` or `--leader-elect-cluster`, and a flag
 * that needs a home cluster when none is selected.
 */
export async function selectClusters(flags: HubFlags, logger: Logger): Promise<ClusterSelection> {
  try {
    const registered = await loadRegisteredClusters({
      ...commandLineSources(flags),
      clusterApi: flags.clusterProviders.clusterApi,
      clusterProfiles: flags.clusterProfiles?.namespaces,
      prefixes: flags.clusterProviders.namePrefixes,
      logger,
    });
    const selected = registered.selected;
    // A missing Deno permission fails here, with the flag to add, instead of as endless retries later.
    requireNet(netTargets(flags, selected));
    requireTlsFiles(flags.metricsServing);
    const home = selected.length > 0 || flags.homeCluster !== undefined
      ? homeCluster(flags.homeCluster, commandLineFirst(selected, registered.clusterDir, flags.kubeconfigs))
      : undefined;
    const needsHome = flagNeedingHome(flags);
    if (!home && needsHome) {
      throw new ConfigError(
        `${needsHome} needs a home cluster, and no selected cluster is registered yet: select "${IN_CLUSTER}" or ` +
          `a context from a kubeconfig file`,
      );
    }
    const leaderElection = flags.leaderElection.enabled
      ? leaderElectionFor(flags.leaderElection, selected, home!)
      : undefined;
    return { registered, selected, home, leaderElection };
  } catch (err) {
    if (err instanceof ConfigError || err instanceof PermissionError) throw new UsageError(err.message, { cause: err });
    throw err;
  }
}

/**
 * What loadRegisteredClusters() reads from the command line (the selection, the kubeconfig files, the folder, the
 * Secrets' namespace, in-cluster's credentials and the trust policy), with the process's environment and directory.
 * The hub's start and `cleanup` both register clusters from these.
 */
export function commandLineSources(flags: HubFlags) {
  return {
    clusters: flags.clusters,
    kubeconfigs: flags.kubeconfigs,
    clusterDir: flags.clusterDir,
    clusterSecrets: flags.clusterSecrets,
    env: readEnv,
    cwd: Deno.cwd(),
    inCluster: { root: flags.serviceAccountRoot, env: readEnv },
    policy: flags.credentialPolicy,
  };
}

/**
 * The home cluster holds the hub's own objects (Leases, cluster Secrets, Mirror sources, TokenReviews): the pod's own
 * cluster when selected, else `--home-cluster`, else the first selected cluster.
 *
 * @example
 * ```ts
 * import { type ClusterAccess, homeCluster } from "../../../cli.ts";
 *
 * declare const selected: ClusterAccess[]; // e.g. prod, staging, dev, in the command line's order
 * console.log(homeCluster(undefined, selected).name); // prod
 * console.log(homeCluster("staging", selected).name); // staging
 * ```
 */
export function homeCluster(requested: string | undefined, selected: ClusterAccess[]): ClusterAccess {
  const inCluster = selected.find((a) => a.name === IN_CLUSTER);
  if (inCluster) return inCluster;
  if (requested === undefined) return selected[0];
  const found = selected.find((a) => a.name === requested);
  if (!found) {
    throw new ConfigError(
      `invalid --home-cluster "${requested}": choose one of the selected clusters (${
        selected.map((a) => a.name).join(", ")
      })`,
    );
  }
  return found;
}

/**
 * `selected` with the clusters the command line defines first, in their order, then the rest: with `--clusters all`, a
 * context of a file dropped into the cluster folder (untrusted: whoever may write there) never becomes the home
 * cluster, which holds the Leases and the cluster Secrets, reviews the protected port's tokens and holds readiness
 * back, by sorting before the command line's; it still can when nothing else is selected.
 */
export function commandLineFirst(
  selected: ClusterAccess[],
  clusterDir: string | undefined,
  kubeconfigs: readonly string[],
): ClusterAccess[] {
  const files = new Set(kubeconfigs.map((f) => resolve(f)));
  const dropped = (a: ClusterAccess) =>
    clusterDir !== undefined && dirname(a.source) === clusterDir && !files.has(a.source);
  return [...selected.filter((a) => !dropped(a)), ...selected.filter(dropped)];
}

/** Every host the hub will connect to or listen on, each named for the error that a missing --allow-net gives. */
function netTargets(flags: HubFlags, selected: ClusterAccess[]): { what: string; host: string }[] {
  return [
    ...selected.flatMap((a) => [
      { what: `cluster "${a.name}"`, host: netHost(a.server) },
      ...(a.proxyUrl ? [{ what: `the proxy of cluster "${a.name}"`, host: netHost(a.proxyUrl) }] : []),
    ]),
    ...(flags.liveness
      ? [{ what: "the --liveness address", host: `${flags.liveness.hostname}:${flags.liveness.port}` }]
      : []),
    ...(flags.metricsServing
      ? [{
        what: "the --metrics-bind-address",
        host: `${flags.metricsServing.hostname}:${flags.metricsServing.port}`,
      }]
      : []),
    ...(flags.webhook
      ? [{ what: "the --webhook-bind-address", host: `${flags.webhook.hostname}:${flags.webhook.port}` }]
      : []),
  ];
}

/** The first flag given that needs a home cluster (the error names it); undefined when none does. */
function flagNeedingHome(flags: HubFlags): string | undefined {
  return flags.clusterSecrets !== undefined
    ? "--cluster-secrets"
    : flags.clusterProviders.clusterApi !== undefined
    ? "--cluster-api"
    : flags.clusterProfiles !== undefined
    ? "--cluster-profiles"
    : flags.leaderElection.enabled
    ? "--leader-elect"
    : flags.shard.enabled
    ? "--shard"
    : flags.metricsServing
    ? "--metrics-bind-address"
    : flags.operators?.includes("mirror")
    ? "the mirror operator"
    : undefined;
}

/**
 * Where the Lease lives: `--leader-elect-cluster`, else the home cluster; its namespace:
 * `--leader-elect-namespace`, else that cluster's namespace (the pod's, in-cluster), else `default`.
 */
function leaderElectionFor(
  f: HubFlags["leaderElection"],
  selected: ClusterAccess[],
  home: ClusterAccess,
): HubLeaderElection {
  const lease = f.cluster !== undefined ? selected.find((a) => a.name === f.cluster) : home;
  if (!lease) {
    throw new ConfigError(
      `invalid --leader-elect-cluster "${f.cluster}": choose one of the selected clusters (${
        selected.map((a) => a.name).join(", ")
      })`,
    );
  }
  return {
    cluster: lease.name,
    access: lease,
    namespace: f.namespace ?? lease.namespace ?? "default",
    name: f.id,
    identity: `${hostname("the leader-election identity")}_${crypto.randomUUID()}`,
    leaseDurationMs: f.leaseDurationMs,
    renewDeadlineMs: f.renewDeadlineMs,
    retryPeriodMs: f.retryPeriodMs,
  };
}

/** Fails fast, naming the flag to add, when the TLS files cannot be read for lack of a Deno permission. */
function requireTlsFiles(m: MetricsServingFlags | undefined): void {
  for (const file of m?.tls ? [m.tls.certFile, m.tls.keyFile] : []) {
    if (!granted({ name: "read", path: file })) {
      throw new PermissionError(
        `cannot read ${file} for the protected port: Deno was started without --allow-read for it`,
      );
    }
  }
}

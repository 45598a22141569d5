// Entry point: the only place that reads flags, the environment and signals; builds and runs the Hub.

// First import: npm packages evaluated after it see only the environment variables --allow-env grants.
import "./_npm_env.ts";
import { cleanupMain } from "./cleanup_cli.ts";
import { type Admission, admissionPermissions, setUpAdmission } from "./admission_setup.ts";
import { FlagError, helpText, type MetricsServingFlags, parseFlags } from "./flags.ts";
import {
  cleaningOnRemove,
  Hub,
  type HubLeaderElection,
  readTlsFiles,
  ReconcileHistory,
  reconcileTotals,
  RequestAuthorizer,
  selfSignedTls,
  serveHealth,
  serveProtected,
  TlsMaterialError,
  type TlsPair,
} from "../hub/mod.ts";
import { loadRegisteredClusters, type RegisteredClusters } from "../hub/providers/mod.ts";
import { homeClusterProviders, type StartsProvider } from "./cluster_providers.ts";
import { ShardCoordinator } from "../hub/shards/mod.ts";
import { type ClusterAccess, ConfigError, IN_CLUSTER, KubeClient } from "../kube/mod.ts";
import { BUILT_IN_OPERATORS, DEFAULT_OPERATORS } from "../operators/mod.ts";
import { FINALIZER, loadOperatorFiles, type Operator, OperatorFileError } from "../sdk/mod.ts";
import { granted, hostname, netHost, PermissionError, readEnv, requireNet } from "./permissions.ts";
import { errorText, Logger } from "../util/mod.ts";

/** The hub's version, as `--version` prints it. */
export const VERSION = "0.1.0";

/**
 * Runs the hub with the built-in operators `--operators` selects plus `options.operators` (a user's own,
 * as `examples/run_greeting.ts` passes them); resolves with the process exit code.
 */
export async function main(argv: string[], options: { operators?: readonly Operator[] } = {}): Promise<number> {
  if (argv[0] === "cleanup") return await cleanupMain(argv.slice(1));
  let flags;
  try {
    flags = parseFlags(argv);
  } catch (err) {
    if (err instanceof FlagError) return usageError(err.message);
    throw err;
  }
  if (flags.help) {
    console.log(helpText());
    return 0;
  }
  if (flags.version) {
    console.log(`operator-hub ${VERSION}`);
    return 0;
  }
  const logger = new Logger({ level: flags.logLevel, format: flags.logFormat });
  let fileOperators: Operator[];
  try {
    fileOperators = await loadOperatorFiles(flags.files, Deno.cwd());
  } catch (err) {
    if (err instanceof OperatorFileError) return usageError(err.message);
    throw err;
  }

  let selected: ClusterAccess[];
  let leaderElection: HubLeaderElection | undefined;
  let home: ClusterAccess | undefined;
  let registered: RegisteredClusters;
  try {
    registered = await loadRegisteredClusters({
      clusters: flags.clusters,
      kubeconfigs: flags.kubeconfigs,
      clusterDir: flags.clusterDir,
      clusterSecrets: flags.clusterSecrets,
      clusterApi: flags.clusterProviders.clusterApi,
      clusterProfiles: flags.clusterProfiles?.namespaces,
      prefixes: flags.clusterProviders.namePrefixes,
      env: readEnv,
      cwd: Deno.cwd(),
      policy: flags.credentialPolicy,
      inCluster: { root: flags.serviceAccountRoot, env: readEnv },
      logger,
    });
    selected = registered.selected;
    // A missing Deno permission fails here, with the flag to add, instead of as endless retries later.
    requireNet([
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
    ]);
    requireTlsFiles(flags.metricsServing);
    home = selected.length > 0 || flags.homeCluster !== undefined
      ? homeCluster(flags.homeCluster, selected)
      : undefined;
    const needsHome = flags.clusterSecrets !== undefined
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
    if (!home && needsHome) {
      throw new ConfigError(
        `${needsHome} needs a home cluster, and no selected cluster is registered yet: select "${IN_CLUSTER}" or ` +
          `a context from a kubeconfig file`,
      );
    }
    if (flags.leaderElection.enabled) leaderElection = leaderElectionFor(flags.leaderElection, selected, home!);
  } catch (err) {
    if (err instanceof ConfigError || err instanceof PermissionError) return usageError(err.message);
    throw err;
  }

  // Mirrors live in the home cluster: without one (nothing selected is registered yet), the default leaves it out.
  const builtIns = flags.operators ?? DEFAULT_OPERATORS.filter((name) => name !== "mirror" || home);
  if (!flags.operators && !home) {
    logger.info("the mirror operator does not run: no home cluster yet (pass --home-cluster or select a cluster)");
  }
  let hub: Hub;
  let hosted: Operator[];
  try {
    hosted = [
      ...builtIns.map((name) =>
        BUILT_IN_OPERATORS[name]({
          homeCluster: home?.name ?? "",
          mirrorOrphanOnUnreachableAfterMs: flags.mirrorOrphanOnUnreachableAfterMs,
          mirrorNamespaces: flags.mirrorNamespaces,
        })
      ),
      ...(options.operators ?? []),
      ...fileOperators,
    ];
    hub = new Hub({
      operators: hosted,
      clusterPermissions: admissionPermissions(flags.webhook),
      namespaces: flags.namespaces,
      limits: flags.limits,
      eventLevel: flags.eventLevel,
      leaderElection,
      http2: flags.http2,
      logger,
    });
  } catch (err) {
    // Two operators of one name, or an invalid name: a usage error, not a crash.
    return usageError(errorText(err));
  }
  // Registered clusters: the registry engages and disengages as kubeconfig files and Secrets come and go.
  registered.registry.registerMetrics(hub.metrics.registry);
  let providers: StartsProvider[];
  try {
    providers = homeClusterProviders({
      flags,
      registry: registered.registry,
      home,
      requestTimeoutMs: hub.limits.requestTimeoutMs,
      idleTimeoutMs: hub.limits.watchIdleTimeoutMs,
      logger,
    });
  } catch (err) {
    if (err instanceof ConfigError) return usageError(err.message);
    throw err;
  }

  const stop = new AbortController();
  const onSignal = (sig: string) => () => {
    if (stop.signal.aborted) return;
    logger.info("shutting down", { signal: sig });
    stop.abort();
  };
  const sigterm = onSignal("SIGTERM");
  const sigint = onSignal("SIGINT");
  Deno.addSignalListener("SIGTERM", sigterm);
  Deno.addSignalListener("SIGINT", sigint);

  // The reconcile rates behind the status page's sparklines, sampled while /status is served anywhere.
  const history = flags.liveness || flags.metricsServing
    ? new ReconcileHistory({
      read: () => reconcileTotals(hub.metrics.registry),
      clusters: () => hub.clusters(),
      logger,
    })
    : undefined;
  const servers: Promise<void>[] = history ? [history.start(stop.signal)] : [];
  if (flags.liveness) {
    const { hostname, port } = flags.liveness;
    try {
      servers.push(serveHealth(hub, {
        hostname,
        port,
        logger,
        statusAndMetrics: !flags.metricsServing,
        history,
        onListen: (addr) => logger.info("health endpoint listening", { url: `http://${addr.hostname}:${addr.port}` }),
      }, stop.signal));
    } catch (err) {
      stop.abort();
      return usageError(`invalid --liveness: cannot listen on ${hostname}:${port}: ${errorText(err)}`);
    }
  }
  let reviewClient: KubeClient | undefined;
  if (flags.metricsServing && home) {
    const m = flags.metricsServing;
    const reviewHome = home;
    reviewClient = new KubeClient(reviewHome, {
      logger: logger.child({ cluster: reviewHome.name }),
      userAgent: "operator-hub/access-review",
      requestTimeoutMs: hub.limits.requestTimeoutMs,
      http2: flags.http2,
    });
    try {
      const tls = m.secure ? await protectedPortTls(m) : undefined;
      servers.push(serveProtected(hub, {
        hostname: m.hostname,
        port: m.port,
        tls,
        tlsFiles: m.tls,
        authorizer: new RequestAuthorizer({ api: reviewClient, registry: hub.metrics.registry, logger }),
        history,
        logger,
        onListen: (addr) =>
          logger.info("metrics and status listening", {
            url: `${tls ? "https" : "http"}://${addr.hostname}:${addr.port}`,
            homeCluster: reviewHome.name,
            certificate: m.tls ? "files" : tls ? "self-signed" : "none",
          }),
      }, stop.signal));
    } catch (err) {
      stop.abort();
      reviewClient.close();
      return usageError(errorText(err));
    }
  }
  let admission: Admission | undefined;
  if (flags.webhook) {
    try {
      admission = await setUpAdmission(flags.webhook, {
        hub,
        operators: hosted,
        namespaces: flags.namespaces,
        home,
        requestTimeoutMs: hub.limits.requestTimeoutMs,
        http2: flags.http2,
        logger,
      });
      servers.push(admission.run(stop.signal));
    } catch (err) {
      stop.abort();
      reviewClient?.close();
      if (err instanceof ConfigError) return usageError(err.message);
      throw err;
    }
  }
  const server = Promise.all(servers).finally(() => reviewClient?.close());

  logger.info("operator-hub starting", {
    version: VERSION,
    clusters: selected.map((a) => a.name),
    operators: hub.operators(),
    homeCluster: home?.name,
    clusterDir: registered.clusterDir,
    clusterSecrets: flags.clusterSecrets,
    clusterApi: flags.clusterProviders.clusterApi,
    ...(leaderElection
      ? {
        leaderElection: `${leaderElection.cluster}:${leaderElection.namespace}/${leaderElection.name}`,
        identity: leaderElection.identity,
      }
      : {}),
  });
  // With --shard the coordinator stands between the registry and the hub: it engages only what this replica owns.
  const shards = flags.shard.enabled && home ? shardCoordinator(flags.shard, home, flags, logger) : undefined;
  if (shards) {
    shards.connect(hub);
    shards.registerMetrics(hub.metrics.registry);
    hub.useShardView(shards);
    logger.info("sharding across replicas", { identity: shards.identity, homeCluster: home!.name });
  }
  // only now: a bad --liveness above exits before anything is engaged
  const target = flags.cleanupOnRemove
    ? cleaningOnRemove(shards ?? hub, {
      // Every built-in operator's finalizers and the files' and embedder's: whatever this hub may have added.
      operators: [
        ...Object.values(BUILT_IN_OPERATORS).map((make) => make({ homeCluster: home?.name ?? "" })),
        ...(options.operators ?? []),
        ...fileOperators,
      ],
      also: [FINALIZER],
      namespaces: flags.namespaces,
      requestTimeoutMs: hub.limits.requestTimeoutMs,
      http2: flags.http2,
      logger,
    })
    : shards ?? hub;
  registered.registry.connect(admission ? admission.target(target) : target);
  await Promise.all([
    hub.start(stop.signal),
    shards?.start(stop.signal),
    server,
    registered.registry.start(stop.signal),
    registered.folder.start(stop.signal),
    ...providers.map((p) => p.start(stop.signal)),
  ]);
  Deno.removeSignalListener("SIGTERM", sigterm);
  Deno.removeSignalListener("SIGINT", sigint);
  logger.info("operator-hub stopped");
  return 0;
}

/**
 * The home cluster holds the hub's own objects (Leases, cluster Secrets, Mirror sources, TokenReviews): the pod's own
 * cluster when selected, else `--home-cluster`, else the first selected cluster.
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
 * Where the Lease lives: `--leader-elect-cluster`, else the home cluster; its namespace:
 * `--leader-elect-namespace`, else that cluster's namespace (the pod's, in-cluster), else `default`.
 */
function leaderElectionFor(
  f: ReturnType<typeof parseFlags>["leaderElection"],
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

/**
 * The shard coordinator: its Leases in the home cluster, in the namespace leader election uses
 * (`--leader-elect-namespace`, else the home context's namespace, else `default`).
 */
function shardCoordinator(
  f: ReturnType<typeof parseFlags>["shard"],
  home: ClusterAccess,
  flags: ReturnType<typeof parseFlags>,
  logger: Logger,
): ShardCoordinator {
  const suffix = crypto.getRandomValues(new Uint8Array(3)).reduce((s, b) => s + b.toString(16).padStart(2, "0"), "");
  return new ShardCoordinator({
    home,
    namespace: flags.leaderElection.namespace ?? home.namespace ?? "default",
    group: f.id,
    identity: `${hostname("the shard identity")}_${suffix}`,
    weight: f.weight,
    warm: f.warm,
    timings: {
      peerLeaseDurationMs: f.leaseDurationMs,
      peerRenewDeadlineMs: f.renewDeadlineMs,
      peerRenewPeriodMs: f.renewPeriodMs,
    },
    requestTimeoutMs: flags.limits.requestTimeoutMs,
    http2: flags.http2,
    logger,
  });
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

/** The protected port's certificate: from the files, else a self-signed one for this host. */
async function protectedPortTls(m: MetricsServingFlags): Promise<TlsPair> {
  if (m.tls) {
    try {
      return await readTlsFiles(m.tls.certFile, m.tls.keyFile);
    } catch (err) {
      if (err instanceof TlsMaterialError) throw new ConfigError(err.message, { cause: err });
      throw err;
    }
  }
  const names = granted({ name: "sys", kind: "hostname" }) ? [Deno.hostname()] : [];
  if (m.hostname !== "0.0.0.0" && m.hostname !== "::" && !/^[\d.:]+$/.test(m.hostname)) names.push(m.hostname);
  return await selfSignedTls(names);
}

function usageError(message: string): number {
  console.error(`operator-hub: error: ${message}`);
  return 2;
}

if (import.meta.main) {
  Deno.exit(await main(Deno.args));
}

// main()'s build steps: the hosted operators and the Hub, its home-cluster providers, the shard coordinator, and the
// chain the registry engages clusters through (shards, --cleanup-on-remove, admission). Modules of src/hub, not its
// barrel: sharding, admission and the home-cluster providers are imported only when their flags ask for them.

import { Hub } from "../../hub/hub.ts";
import type { EngageTarget } from "../../hub/providers/registry.ts";
import type { ShardCoordinator } from "../../hub/shards/shard_coordinator.ts";
import { ALL_CONTEXTS, type ClusterAccess, ConfigError } from "../../kube/mod.ts";
import { BUILT_IN_OPERATORS, DEFAULT_OPERATORS } from "../../operators/mod.ts";
import type { Operator } from "../../runtime/mod.ts";
import { FINALIZER } from "../../sdk/mod.ts";
import { errorText, type Logger } from "../../util/mod.ts";
import type { Admission } from "./admission_setup.ts";
import type { ClusterSelection } from "./cluster_selection.ts";
import { homeClusterProviders, type StartsProvider } from "./cluster_providers.ts";
import { markingCommandLine } from "./command_line_clusters.ts";
import type { HubFlags } from "../flags/hub_flags.ts";
import { loadFeature } from "../feature_import.ts";
import { hostname } from "../permissions.ts";
import { UsageError } from "../usage_error.ts";

/** The operators a hub hosts besides the built-in ones `--operators` selects. */
export interface ExtraOperators {
  /** An embedder's own (`main(argv, {operators})`, as examples/run_greeting.ts passes them). */
  embedded: readonly Operator[];
  /** Those the operator files on the command line export. */
  files: readonly Operator[];
}

/** The Hub, not started, and the operators it hosts. */
export interface AssembledHub {
  hub: Hub;
  hosted: Operator[];
}

/**
 * Builds the Hub with the selected built-in operators, the embedder's and the files', and hands the registry's
 * metrics to the Hub's registry.
 *
 * Guarantees: without `--operators`, the mirror operator is left out (with a log line) when there is no home cluster,
 * since Mirrors live there; two operators of one name, or an invalid name, throw UsageError, not a crash. The
 * admission module is loaded only with `--webhook-bind-address` (its configurations' RBAC joins the pre-flight).
 */
export async function assembleHub(
  flags: HubFlags,
  clusters: ClusterSelection,
  extra: ExtraOperators,
  logger: Logger,
): Promise<AssembledHub> {
  const { home } = clusters;
  const clusterPermissions = flags.webhook
    ? (await loadFeature("--webhook-bind-address", () => import("./admission_setup.ts"))).admissionPermissions(
      flags.webhook,
    )
    : [];
  const builtIns = flags.operators ?? DEFAULT_OPERATORS.filter((name) => name !== "mirror" || home);
  if (!flags.operators && !home) {
    logger.info("the mirror operator does not run: no home cluster yet (pass --home-cluster or select a cluster)");
  }
  let assembled: AssembledHub;
  try {
    const hosted = [
      ...builtIns.map((name) =>
        BUILT_IN_OPERATORS[name]({
          homeCluster: home?.name ?? "",
          mirrorOrphanOnUnreachableAfterMs: flags.mirrorOrphanOnUnreachableAfterMs,
          mirrorNamespaces: flags.mirrorNamespaces,
        })
      ),
      ...extra.embedded,
      ...extra.files,
    ];
    const hub = new Hub({
      operators: hosted,
      clusterPermissions,
      namespaces: flags.namespaces,
      limits: flags.limits,
      eventLevel: flags.eventLevel,
      leaderElection: clusters.leaderElection,
      http2: flags.http2,
      checkReads: flags.checkReads,
      // The home cluster and the command line's clusters hold /readyz back; providers' clusters only with `all`.
      readiness: {
        clusters: flags.readinessClusters,
        home: home?.name,
        named: flags.clusters.filter((c) => c !== ALL_CONTEXTS),
      },
      logger,
    });
    assembled = { hub, hosted };
  } catch (err) {
    throw new UsageError(errorText(err), { cause: err });
  }
  // Registered clusters: the registry engages and disengages as kubeconfig files and Secrets come and go.
  clusters.registered.registry.registerMetrics(assembled.hub.metrics.registry);
  return assembled;
}

/**
 * The providers that read the home cluster (`--cluster-secrets`, `--cluster-api`, `--cluster-profiles`), not started.
 * A `--clusterprofile-provider-file` that cannot be used throws UsageError, before anything is engaged.
 */
export async function homeProviders(
  flags: HubFlags,
  clusters: ClusterSelection,
  hub: Hub,
  logger: Logger,
): Promise<StartsProvider[]> {
  try {
    return await homeClusterProviders({
      flags,
      registry: clusters.registered.registry,
      home: clusters.home,
      requestTimeoutMs: hub.limits.requestTimeoutMs,
      idleTimeoutMs: hub.limits.watchIdleTimeoutMs,
      // One parse worker for every untrusted kubeconfig: the folder provider's, which main.ts always starts.
      parser: clusters.registered.folder.parser,
      logger,
    });
  } catch (err) {
    if (err instanceof ConfigError) throw new UsageError(err.message, { cause: err });
    throw err;
  }
}

/**
 * With `--shard` (and a home cluster), the coordinator that stands between the registry and the hub: connected to the
 * hub, its metrics registered and its view shown on /status, not started. Undefined without `--shard`; its module is
 * loaded only with it.
 *
 * Its Leases live in the home cluster, in the namespace leader election uses (`--leader-elect-namespace`, else the
 * home context's namespace, else `default`).
 */
export async function shardCoordinator(
  flags: HubFlags,
  home: ClusterAccess | undefined,
  hub: Hub,
  logger: Logger,
): Promise<ShardCoordinator | undefined> {
  if (!flags.shard.enabled || !home) return undefined;
  const { ShardCoordinator } = await loadFeature("--shard", () => import("../../hub/shards/shard_coordinator.ts"));
  const f = flags.shard;
  const suffix = crypto.getRandomValues(new Uint8Array(3)).reduce((s, b) => s + b.toString(16).padStart(2, "0"), "");
  const shards = new ShardCoordinator({
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
  shards.connect(hub);
  shards.registerMetrics(hub.metrics.registry);
  hub.useShardView(shards);
  logger.info("sharding across replicas", { identity: shards.identity, homeCluster: home.name });
  return shards;
}

/** What the registry engages clusters through, from the hub outwards. */
export interface EngageChain {
  hub: Hub;
  shards: ShardCoordinator | undefined;
  admission: Admission | undefined;
  extra: ExtraOperators;
}

/**
 * Connects the registry to the hub: through the shard coordinator when sharding (it engages only what this replica
 * owns), then `--cleanup-on-remove` (a leaving cluster first loses every finalizer this hub may have added: every
 * built-in operator's, the embedder's, the files' and the SDK's), then admission (a leaving cluster loses its webhook
 * configurations). Every registration on the way says whether the command line defines the cluster
 * (command_line_clusters.ts): those hold readiness back and keep their detailed errors. The cleanup module is loaded
 * only with `--cleanup-on-remove`.
 */
export async function connectRegistry(
  flags: HubFlags,
  clusters: ClusterSelection,
  chain: EngageChain,
  logger: Logger,
): Promise<void> {
  const { hub, shards, admission, extra } = chain;
  const cleaningOnRemove = flags.cleanupOnRemove
    ? (await loadFeature("--cleanup-on-remove", () => import("../../hub/cluster/cleanup_on_remove.ts")))
      .cleaningOnRemove
    : undefined;
  const target: EngageTarget = cleaningOnRemove
    ? cleaningOnRemove(shards ?? hub, {
      operators: [
        ...Object.values(BUILT_IN_OPERATORS).map((make) => make({ homeCluster: clusters.home?.name ?? "" })),
        ...extra.embedded,
        ...extra.files,
      ],
      also: [FINALIZER],
      namespaces: flags.namespaces,
      requestTimeoutMs: hub.limits.requestTimeoutMs,
      http2: flags.http2,
      logger,
    })
    : shards ?? hub;
  clusters.registered.registry.connect(
    markingCommandLine(admission ? admission.target(target) : target, flags.kubeconfigs, Deno.cwd()),
  );
}

// Start-up of the registered set: --clusters, --kubeconfig, --cluster-dir and --cluster-secrets read into one registry.

import { dirname, join, resolve } from "node:path";
import {
  ALL_CONTEXTS,
  type ClusterAccess,
  ConfigError,
  type CredentialPolicy,
  type EnvSource,
  IN_CLUSTER,
  inClusterAccess,
  type InClusterOptions,
  loadContexts,
} from "../../kube/mod.ts";
import type { Logger } from "../../util/mod.ts";
import { FolderProvider } from "./sources/folder_provider.ts";
import type { NamePrefixes } from "./name_prefixes.ts";
import type { ClusterOffer } from "./cluster_offer.ts";
import { ClusterRegistry } from "./registry.ts";

export interface RegisteredClustersOptions {
  /** `--clusters`: names, `all`, `in-cluster`. */
  clusters: string[];
  /** `--kubeconfig` files; each is watched by the folder provider. */
  kubeconfigs: string[];
  /** `--cluster-dir`; default `clusters` under `cwd` when no `--kubeconfig` is given, else none. */
  clusterDir?: string;
  /** `--cluster-secrets`: a Secret provider may register names later, so unknown names wait instead of failing. */
  clusterSecrets?: string;
  /** `--cluster-api`: a Cluster API `Cluster` may register names later, so unknown names wait too. */
  clusterApi?: readonly string[];
  /** `--cluster-profiles`: ClusterProfiles may register any name later, as Secrets may. */
  clusterProfiles?: readonly string[];
  /** `--cluster-name-prefix`: each provider's name prefix (see ClusterRegistry). */
  prefixes?: NamePrefixes;
  env: EnvSource;
  cwd: string;
  /** What untrusted kubeconfigs (files dropped into the cluster folder) may hold. Default: the strict policy. */
  policy?: CredentialPolicy;
  inCluster?: InClusterOptions;
  /** Names engaged or disengaged at once. Default 8. */
  concurrency?: number;
  /** The least time between two engages of one name (see ClusterRegistryOptions); default 3 s. */
  reengageIntervalMs?: number;
  logger: Logger;
}

export interface RegisteredClusters {
  registry: ClusterRegistry;
  folder: FolderProvider;
  /** The folder watched, if any. */
  clusterDir?: string;
  /** Usable now among the selected names, in `--clusters` order (`all`: sorted). */
  selected: ClusterAccess[];
}

/**
 * Reads every source once and checks the selection, without engaging anything.
 *
 * Sources: the folder provider (the `*.yaml` files of the cluster folder and every `--kubeconfig` file, watched
 * afterwards); without `--kubeconfig`, `$KUBECONFIG` (or `~/.kube/config`) as the static `flag` source; `in-cluster`
 * when selected; and, later, the Secret provider.
 *
 * Guarantees: throws ConfigError (the CLI exits 2) for an invalid or missing kubeconfig file, a selected context that
 * is broken (with `all`, only a trusted one: a dropped file's broken or refused context is shown, never fatal), a
 * selected name registered twice, and a selected name that no source defines, unless `--cluster-secrets` or
 * `--cluster-api` is set (a Secret or a `Cluster` may register it later: it is shown `registering` until then).
 */
export async function loadRegisteredClusters(o: RegisteredClustersOptions): Promise<RegisteredClusters> {
  const all = o.clusters.includes(ALL_CONTEXTS);
  const selection = all ? "all" : o.clusters;
  const clusterDir = o.clusterDir !== undefined
    ? resolve(o.cwd, o.clusterDir)
    : o.kubeconfigs.length === 0
    ? join(o.cwd, "clusters")
    : undefined;
  const where = [
    clusterDir ? `a kubeconfig file in ${clusterDir}` : undefined,
    o.clusterSecrets ? `a Secret labelled sigs.k8s.io/multicluster-runtime-kubeconfig=true in ${o.clusterSecrets}` : "",
    o.clusterApi ? `a Provisioned Cluster API Cluster in ${o.clusterApi.join(",")}` : "",
    o.clusterProfiles ? `a healthy ClusterProfile in ${o.clusterProfiles.join(",")}` : "",
  ].filter(Boolean).join(" or ");
  // Providers that read the home cluster may register any name later: a name unknown at start-up waits for them.
  const later = o.clusterSecrets !== undefined || o.clusterApi !== undefined || o.clusterProfiles !== undefined;
  const registry = new ClusterRegistry({
    selection,
    concurrency: o.concurrency,
    reengageIntervalMs: o.reengageIntervalMs,
    prefixes: o.prefixes,
    howToRegister: where ? `add ${where} (deno task cluster:add)` : undefined,
    logger: o.logger,
  });

  const searched: string[] = [];
  if (o.kubeconfigs.length === 0) {
    // A $KUBECONFIG entry inside the cluster folder is the folder provider's already (same file, same names).
    const files = defaultKubeconfigFiles(o.env, o.cwd, searched)
      .filter((f) => !(clusterDir && dirname(f) === clusterDir && f.endsWith(".yaml")));
    if (files.length > 0) {
      const catalog = await loadContexts({ files, env: o.env, cwd: o.cwd });
      const offers: ClusterOffer[] = catalog.names().map((name) => {
        const digest = `static:${name}`;
        try {
          return { name, access: catalog.select([name])[0], endpointDigest: digest, credentialsDigest: digest };
        } catch (err) {
          if (!(err instanceof ConfigError)) throw err;
          return { name, error: err.message, endpointDigest: digest, credentialsDigest: digest };
        }
      });
      registry.offer("flag", files.join(":"), offers);
    }
  }
  const folder = new FolderProvider({
    registry,
    dir: clusterDir,
    files: o.kubeconfigs.map((f) => resolve(o.cwd, f)),
    env: o.env,
    policy: o.policy,
    logger: o.logger,
  });
  await folder.scan({ strict: true });
  // After the files, as before: a kubeconfig problem is reported ahead of an in-cluster one.
  if (o.clusters.includes(IN_CLUSTER)) {
    const access = inClusterAccess({ root: o.inCluster?.root, env: o.inCluster?.env ?? o.env });
    const digest = `static:${IN_CLUSTER}`;
    registry.offer("flag", IN_CLUSTER, [{
      name: IN_CLUSTER,
      access,
      endpointDigest: digest,
      credentialsDigest: digest,
    }]);
  }
  if (clusterDir) searched.unshift(join(clusterDir, "*.yaml"));

  const { serving, problems } = registry.check();
  const choices = () => {
    const names = registry.names();
    if (names.length === 0) {
      const looked = [...o.kubeconfigs.map((f) => resolve(o.cwd, f)), ...searched].join(", ") || "nowhere";
      return `no kubeconfig contexts were found (looked in ${looked}); pass --kubeconfig FILE or use "${IN_CLUSTER}"`;
    }
    return `known contexts: ${names.join(", ")} (or "${ALL_CONTEXTS}", "${IN_CLUSTER}")`;
  };
  for (const p of problems) {
    // A Secret or a dropped file never stops the hub: with `all`, its broken or refused context is shown in /status.
    if (all && p.untrusted) continue;
    if (!p.registered) {
      if (later) continue;
      throw new ConfigError(`unknown context "${p.name}" in --clusters; ${choices()}`);
    }
    throw new ConfigError(p.error);
  }
  if (all && serving.length === 0 && !clusterDir && !later) {
    throw new ConfigError(`--clusters ${ALL_CONTEXTS} matched no context; ${choices()}`);
  }
  // `all` alone does not include the pod's own cluster; `all,in-cluster` does.
  const order = all ? [...o.clusters.filter((c) => c === IN_CLUSTER), ...registry.names()] : o.clusters;
  const byName = new Map(serving.map((a) => [a.name, a]));
  const selected = [...new Set(order)].map((n) => byName.get(n)).filter((a): a is ClusterAccess => a !== undefined);
  return { registry, folder, clusterDir, selected };
}

/** `$KUBECONFIG`'s existing entries, else `~/.kube/config` if it exists: kubectl's search, minus the folder. */
function defaultKubeconfigFiles(env: EnvSource, cwd: string, searched: string[]): string[] {
  const get = typeof env === "function" ? env : (k: string) => env[k];
  const exists = (p: string) => {
    try {
      Deno.statSync(p);
      return true;
    } catch {
      return false;
    }
  };
  const list = get("KUBECONFIG");
  if (list) {
    searched.push("$KUBECONFIG");
    return [...new Set(list.split(":").filter((p) => p !== "").map((p) => resolve(cwd, p)))].filter(exists);
  }
  const home = get("HOME");
  if (!home) return [];
  const p = join(home, ".kube", "config");
  searched.push(p);
  return exists(p) ? [p] : [];
}

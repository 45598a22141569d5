// The providers that read the home cluster (labelled Secrets, Cluster API Clusters, ClusterProfiles), built from the
// flags in one place so main.ts stays short. Each provider's module is imported only when its flag asks for it.

import type { ClusterProfileFlags, HubFlags } from "../flags/hub_flags.ts";
import type { ClusterProfileProvider } from "../../hub/providers/sources/cluster_profile_provider.ts";
import type { ClusterRegistry } from "../../hub/providers/registry.ts";
import { type ClusterAccess, ConfigError, type CredentialPolicy, type KubeconfigParser } from "../../kube/mod.ts";
import { readEnv } from "../permissions.ts";
import type { Logger } from "../../util/mod.ts";
import { loadFeature } from "../feature_import.ts";

/** Something that lists and watches until the signal aborts. */
export interface StartsProvider {
  start(signal: AbortSignal): Promise<void>;
}

export interface HomeProvidersOptions {
  flags: HubFlags;
  registry: ClusterRegistry;
  /** Without a home cluster none is built (selectClusters() already refused the flags that need one). */
  home: ClusterAccess | undefined;
  requestTimeoutMs: number;
  idleTimeoutMs: number;
  /**
   * The parser the Secret and Cluster API providers share, started by its owner (the folder provider's): one parse
   * worker for the hub. Default: each provider makes and starts its own.
   */
  parser?: KubeconfigParser;
  logger: Logger;
}

/**
 * Every home-cluster provider the flags ask for, not started yet, each provider's module loaded only then. A
 * --clusterprofile-provider-file that cannot be used throws ConfigError (exit 2), before anything is engaged; a module
 * that cannot be loaded throws FeatureLoadError.
 */
export async function homeClusterProviders(o: HomeProvidersOptions): Promise<StartsProvider[]> {
  const { flags, registry, home, logger } = o;
  if (!home) return [];
  const common = {
    registry,
    home,
    policy: flags.credentialPolicy,
    requestTimeoutMs: o.requestTimeoutMs,
    idleTimeoutMs: o.idleTimeoutMs,
    http2: flags.http2,
    logger,
  };
  const shared = o.parser ? { parser: o.parser } : {};
  const out: StartsProvider[] = [];
  if (flags.clusterSecrets !== undefined) {
    const { SecretProvider } = await loadFeature(
      "--cluster-secrets",
      () => import("../../hub/providers/sources/secret_provider.ts"),
    );
    // The selection and the prefix let it leave unselected Secrets unparsed (`--clusters a,b`, not `all`).
    out.push(
      new SecretProvider({
        ...common,
        ...shared,
        namespace: flags.clusterSecrets,
        env: readEnv,
        selection: flags.clusters,
        prefixes: flags.clusterProviders.namePrefixes,
      }),
    );
  }
  if (flags.clusterProviders.clusterApi !== undefined) {
    const { ClusterApiProvider } = await loadFeature(
      "--cluster-api",
      () => import("../../hub/providers/sources/cluster_api_provider.ts"),
    );
    out.push(
      new ClusterApiProvider({ ...common, ...shared, namespaces: flags.clusterProviders.clusterApi, env: readEnv }),
    );
  }
  if (flags.clusterProfiles !== undefined) {
    out.push(await clusterProfileProvider({ ...common, flags: flags.clusterProfiles, env: readEnv }));
  }
  return out;
}

/** What the ClusterProfile provider is built from. */
export interface ClusterProfileWiring {
  flags: ClusterProfileFlags;
  registry: ClusterRegistry;
  home: ClusterAccess;
  policy: CredentialPolicy;
  /** The hub's environment (PATH and HOME of it reach the plugins). */
  env: (key: string) => string | undefined;
  requestTimeoutMs?: number;
  idleTimeoutMs?: number;
  http2?: boolean;
  logger: Logger;
}

/**
 * The provider for the flags, its modules loaded now; a provider file that cannot be read or used throws ConfigError
 * (exit 2).
 */
export async function clusterProfileProvider(w: ClusterProfileWiring): Promise<ClusterProfileProvider> {
  const { parseProviderFile, ProviderFileError } = await loadFeature(
    "--cluster-profiles",
    () => import("../../hub/providers/sources/cluster_profile_access.ts"),
  );
  const { ClusterProfileProvider } = await loadFeature(
    "--cluster-profiles",
    () => import("../../hub/providers/sources/cluster_profile_provider.ts"),
  );
  const path = w.flags.providerFile;
  let text: string;
  try {
    text = Deno.readTextFileSync(path);
  } catch (err) {
    throw new ConfigError(`cannot read --clusterprofile-provider-file ${path}: ${(err as Error).name}`);
  }
  let file;
  try {
    file = parseProviderFile(text, path, w.env("PATH") ?? "");
  } catch (err) {
    if (err instanceof ProviderFileError) throw new ConfigError(err.message);
    throw err;
  }
  const baseEnv: Record<string, string> = {};
  for (const k of ["PATH", "HOME"]) {
    const v = w.env(k);
    if (v !== undefined) baseEnv[k] = v;
  }
  return new ClusterProfileProvider({
    registry: w.registry,
    home: w.home,
    namespaces: w.flags.namespaces,
    file,
    policy: w.policy,
    baseEnv,
    requestTimeoutMs: w.requestTimeoutMs,
    idleTimeoutMs: w.idleTimeoutMs,
    http2: w.http2,
    logger: w.logger,
  });
}

// The providers that read the home cluster (labelled Secrets, Cluster API Clusters, ClusterProfiles), built from the
// flags in one place so main.ts stays short.

import { clusterProfileProvider } from "./cluster_profile_flags.ts";
import type { HubFlags } from "./flags.ts";
import { ClusterApiProvider, type ClusterRegistry, SecretProvider } from "../hub/providers/mod.ts";
import type { ClusterAccess, KubeconfigParser } from "../kube/mod.ts";
import { readEnv } from "./permissions.ts";
import type { Logger } from "../util/mod.ts";

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
 * Every home-cluster provider the flags ask for, not started yet. A --clusterprofile-provider-file that cannot be used
 * throws ConfigError (exit 2), before anything is engaged.
 */
export function homeClusterProviders(o: HomeProvidersOptions): StartsProvider[] {
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
    out.push(
      new ClusterApiProvider({ ...common, ...shared, namespaces: flags.clusterProviders.clusterApi, env: readEnv }),
    );
  }
  if (flags.clusterProfiles !== undefined) {
    out.push(clusterProfileProvider({ ...common, flags: flags.clusterProfiles, env: readEnv }));
  }
  return out;
}

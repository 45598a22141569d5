// What every provider that watches the home cluster takes (the registry, the home cluster, timeouts, clock, logger),
// what the two that read untrusted kubeconfigs from Secrets take besides, and the one way each builds its home client.

import {
  type ClusterAccess,
  type CredentialPolicy,
  type EnvSource,
  KubeClient,
  type KubeconfigParser,
} from "../../../kube/mod.ts";
import { type Clock, type Logger, SystemClock } from "../../../util/mod.ts";
import type { ProviderName } from "../cluster_offer.ts";
import type { ClusterRegistry } from "../registry.ts";

/** The options every provider watching the home cluster shares (the Secret, ClusterProfile and Cluster API ones). */
export interface HomeWatchOptions {
  registry: ClusterRegistry;
  /** The home cluster, which holds what the provider reads. */
  home: ClusterAccess;
  requestTimeoutMs?: number;
  /** A watch that receives nothing for this long is restarted (the Watcher's idle watchdog). */
  idleTimeoutMs?: number;
  http2?: boolean;
  clock?: Clock;
  logger: Logger;
}

/** What a provider reading kubeconfigs from Secrets (untrusted: whoever may write those Secrets) takes besides. */
export interface KubeconfigSecretOptions {
  /** What a kubeconfig may hold. Default: inline credentials, https, no exec plugin. */
  policy?: CredentialPolicy;
  /** Where an allowed exec plugin's PATH and HOME come from (nothing else of it is passed). Default: none. */
  env?: EnvSource;
  /**
   * Parses the kubeconfigs off the event loop, in a worker with a time limit; whoever passes it starts it. Default: a
   * KubeconfigParser of this provider's own, started and stopped with it.
   */
  parser?: KubeconfigParser;
}

/** One provider's reach into the home cluster. */
export interface HomeClient {
  client: KubeClient;
  clock: Clock;
  /** The options' logger, with the home cluster's name and the provider. */
  log: Logger;
}

/** The KubeClient a provider reads the home cluster with, identified by `userAgent`, logging as `provider`. */
export function homeClient(o: HomeWatchOptions, provider: ProviderName, userAgent: string): HomeClient {
  const clock = o.clock ?? new SystemClock();
  const log = o.logger.child({ cluster: o.home.name, provider });
  const client = new KubeClient(o.home, {
    clock,
    requestTimeoutMs: o.requestTimeoutMs,
    logger: log,
    userAgent,
    http2: o.http2,
  });
  return { client, clock, log };
}

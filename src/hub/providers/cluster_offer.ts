// What a provider hands the registry: the provider's name, one cluster as one source offers it, and the provider's
// own watch health. The registry and its helpers import these; this file imports none of them.

import type { ClusterAccess } from "../../kube/mod.ts";
import type { ProviderHealth } from "../health/cluster_health.ts";
import type { RegistrationCondition } from "../health/hub_health.ts";

/**
 * Where a registration came from: `--clusters` at start, a kubeconfig file, a labelled Secret, a ClusterProfile, a
 * Cluster API `Cluster`.
 */
export type ProviderName = "flag" | "folder" | "secret" | "cluster-profile" | "cluster-api";

/** Every provider, in the order /metrics lists them. */
export const PROVIDERS: readonly ProviderName[] = ["flag", "folder", "secret", "cluster-profile", "cluster-api"];

/** One cluster as one source (a file, a Secret) offers it. */
export interface ClusterOffer {
  /** The cluster's name: the context name (folder, flag) or the Secret's name. */
  name: string;
  /** Set when usable. */
  access?: ClusterAccess;
  /** Why it is not usable; shown on the name's /status entry. */
  error?: string;
  /** A change here re-engages (server URL, CA, TLS settings, proxy, namespace). */
  endpointDigest: string;
  /** A change here alone swaps credentials in place. */
  credentialsDigest: string;
  /** The inventory's condition for it (a ClusterProfile's ControlPlaneHealthy), shown on its /status entry. */
  condition?: RegistrationCondition;
}

/** What a provider says about its own watch, asked whenever /status is built. */
export interface ProviderWatch {
  state: ProviderHealth["state"];
  /** Whether its first read of its sources (the folder's scan, the Secrets' list) completed; readiness waits for it. */
  synced: boolean;
  watches: string[];
  lastError: string | null;
}

// The inventory provider flags of this file's group: `--cluster-api NAMESPACE` (Cluster API `Cluster` objects) and
// `--cluster-name-prefix PROVIDER=PREFIX` (providers side by side), their checks and their --help lines. Pure.

import { commaList, DNS_LABEL, FlagError, type FlagValues } from "./flag_values.ts";
// name_prefixes.ts, not the providers' barrel: the Cluster API provider is loaded only with --cluster-api.
import {
  NamePrefixError,
  type NamePrefixes,
  parseNamePrefixes,
  PREFIXABLE_PROVIDERS,
} from "../hub/providers/name_prefixes.ts";

/** `--cluster-api *`: every namespace (the provider's CLUSTER_API_ALL_NAMESPACES; a test keeps them equal). */
export const CLUSTER_API_ALL_NAMESPACES = "*";

/** The parseArgs options of the group. */
export const CLUSTER_PROVIDER_OPTIONS = {
  "cluster-api": { type: "string", multiple: true },
  "cluster-name-prefix": { type: "string", multiple: true },
} as const;

/** What the group's flags say. */
export interface ClusterProviderFlags {
  /** `--cluster-api`: namespaces of the home cluster whose Cluster API `Cluster`s register clusters; `["*"]` = all. */
  clusterApi?: string[];
  /** `--cluster-name-prefix`: each provider's name prefix. */
  namePrefixes: NamePrefixes;
}

/** The --help lines of the group (inside the Clusters section). */
export function clusterProviderHelp(): string[] {
  return [
    "  --cluster-api NS[,NS]      register one cluster per Cluster API Cluster (cluster.x-k8s.io) in these",
    "                             namespaces of the home cluster ('*' = all; repeatable) while its phase is",
    "                             Provisioned, from its Secret NAME-kubeconfig (data key value), held to the",
    "                             untrusted rules; cluster name = NAMESPACE/NAME",
    "  --cluster-name-prefix PROVIDER=PREFIX",
    "                             put PREFIX before every name PROVIDER registers, so providers run side by",
    `                             side (PROVIDER: ${PREFIXABLE_PROVIDERS.join(", ")};`,
    "                             repeatable, comma list; e.g. secret=sec#); the command line's names are",
    "                             never prefixed and stay reserved",
  ];
}

/**
 * Reads the group's flags. Throws FlagError (exit 2) with one line naming the value and the valid choices: a
 * namespace that is not a DNS label or `*`, `--cluster-api` given with no namespace, or a bad `PROVIDER=PREFIX`.
 */
export function parseClusterProviderFlags(values: FlagValues): ClusterProviderFlags {
  let clusterApi: string[] | undefined;
  if (values["cluster-api"] !== undefined) {
    const names = commaList(values["cluster-api"]);
    if (names.length === 0) {
      throw new FlagError(
        `invalid --cluster-api: give a namespace name or '${CLUSTER_API_ALL_NAMESPACES}' for all namespaces`,
      );
    }
    const bad = names.find((n) => n !== CLUSTER_API_ALL_NAMESPACES && (!DNS_LABEL.test(n) || n.length > 63));
    if (bad !== undefined) {
      throw new FlagError(
        `invalid --cluster-api "${bad}": must be a namespace name (a lowercase DNS label) or '${CLUSTER_API_ALL_NAMESPACES}'`,
      );
    }
    clusterApi = names.includes(CLUSTER_API_ALL_NAMESPACES) ? [CLUSTER_API_ALL_NAMESPACES] : [...new Set(names)];
  }
  let namePrefixes: NamePrefixes;
  try {
    namePrefixes = parseNamePrefixes(commaList(values["cluster-name-prefix"]));
  } catch (err) {
    if (err instanceof NamePrefixError) throw new FlagError(err.message);
    throw err;
  }
  return { clusterApi, namePrefixes };
}

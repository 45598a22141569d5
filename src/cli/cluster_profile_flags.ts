// `--cluster-profiles NAMESPACE` and `--clusterprofile-provider-file FILE` (SIG-Multicluster ClusterProfiles, KEP-5339):
// their checks, their --help lines, and the provider main.ts starts from them.

import { commaList, DNS_LABEL, FlagError, type FlagValues } from "./flag_values.ts";
import type { ClusterProfileProvider } from "../hub/providers/cluster_profile_provider.ts";
import type { ClusterRegistry } from "../hub/providers/registry.ts";
import { type ClusterAccess, ConfigError, type CredentialPolicy } from "../kube/mod.ts";
import type { Logger } from "../util/mod.ts";
import { loadFeature } from "./feature_import.ts";

/** `--cluster-profiles *`: every namespace (the provider's ALL_PROFILE_NAMESPACES; a test keeps them equal). */
export const ALL_PROFILE_NAMESPACES = "*";

/** The parseArgs options of the group. */
export const CLUSTER_PROFILE_OPTIONS = {
  "cluster-profiles": { type: "string", multiple: true },
  "clusterprofile-provider-file": { type: "string" },
} as const;

/** What the group's flags say; undefined when `--cluster-profiles` is not given. */
export interface ClusterProfileFlags {
  /** Namespaces of the home cluster, or [`*`] for all. */
  namespaces: string[];
  providerFile: string;
}

/** The --help lines of the group (inside the Clusters section). */
export function clusterProfileHelp(): string[] {
  return [
    "  --cluster-profiles NS[,NS] register one cluster per ClusterProfile (multicluster.x-k8s.io, SIG-",
    "                             Multicluster) in these namespaces of the home cluster ('*' = all;",
    "                             repeatable) while its ControlPlaneHealthy condition is True; cluster name =",
    "                             NAMESPACE/NAME; needs --clusterprofile-provider-file",
    "  --clusterprofile-provider-file FILE",
    "                             KEP-5339's JSON: the exec plugin for each access provider name. Only the",
    "                             plugins it names run (no --exec-plugin-allowlist needed); a profile gives",
    "                             server and inline CA (https only) and extra args/env as its policies allow",
  ];
}

/** Reads the group's flags. Throws FlagError (exit 2) with one line naming the value and what is valid. */
export function parseClusterProfileFlags(values: FlagValues): ClusterProfileFlags | undefined {
  const file = values["clusterprofile-provider-file"] as string | undefined;
  if (values["cluster-profiles"] === undefined) {
    if (file !== undefined) throw new FlagError("--clusterprofile-provider-file needs --cluster-profiles NAMESPACE");
    return undefined;
  }
  const names = commaList(values["cluster-profiles"]);
  if (names.length === 0) {
    throw new FlagError(`invalid --cluster-profiles: give a namespace name or '${ALL_PROFILE_NAMESPACES}' for all`);
  }
  const bad = names.find((n) => n !== ALL_PROFILE_NAMESPACES && (!DNS_LABEL.test(n) || n.length > 63));
  if (bad !== undefined) {
    throw new FlagError(
      `invalid --cluster-profiles "${bad}": must be a namespace name (a lowercase DNS label) or '${ALL_PROFILE_NAMESPACES}'`,
    );
  }
  if (file === undefined || file.trim() === "") {
    throw new FlagError(
      "--cluster-profiles needs --clusterprofile-provider-file FILE: the exec plugin for each access provider",
    );
  }
  return {
    namespaces: names.includes(ALL_PROFILE_NAMESPACES) ? [ALL_PROFILE_NAMESPACES] : [...new Set(names)],
    providerFile: file,
  };
}

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
    () => import("../hub/providers/cluster_profile_access.ts"),
  );
  const { ClusterProfileProvider } = await loadFeature(
    "--cluster-profiles",
    () => import("../hub/providers/cluster_profile_provider.ts"),
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

// `--readiness-clusters command-line|all`: which registered clusters hold /readyz back, and its --help lines. Pure.

import { FlagError, type FlagValues } from "./flag_values.ts";

/** `command-line`: the clusters the command line defines (the default); `all`: every registered cluster too. */
export type ReadinessClusters = "command-line" | "all";

/** The parseArgs option of readiness. */
export const READINESS_OPTIONS = {
  "readiness-clusters": { type: "string" },
} as const;

const CHOICES: readonly ReadinessClusters[] = ["command-line", "all"];

/** The --help lines of `--readiness-clusters`, in the Health section. */
export function readinessHelp(): string[] {
  return [
    "  --readiness-clusters MODE  which clusters hold /readyz back: command-line (default: the names",
    "                             --clusters lists, the contexts of --kubeconfig files and $KUBECONFIG,",
    "                             in-cluster, and the home cluster; other clusters from Secrets, the folder,",
    "                             ClusterProfiles and Cluster API show in /status and never make the pod",
    "                             unready) or all (every registered cluster too, so one unreachable Secret's",
    "                             cluster takes the pod out of its Service)",
  ];
}

/** `--readiness-clusters`; `command-line` when absent. Throws FlagError naming the value seen and the choices. */
export function parseReadinessClusters(values: FlagValues): ReadinessClusters {
  const raw = values["readiness-clusters"] as string | undefined;
  if (raw === undefined) return "command-line";
  if (!(CHOICES as readonly string[]).includes(raw)) {
    throw new FlagError(
      `invalid --readiness-clusters ${JSON.stringify(raw)}: choose command-line (the default) or all`,
    );
  }
  return raw as ReadinessClusters;
}

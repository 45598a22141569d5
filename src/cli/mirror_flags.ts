// `--mirror-namespaces a,b`: the only namespaces Mirrors may write copies into (see src/operators/mirror/namespace_policy.ts).

import { commaList, DNS_LABEL, FlagError, type FlagValues } from "./flag_values.ts";

/** The parseArgs options of the Mirror's reach. */
export const MIRROR_OPTIONS = {
  "mirror-namespaces": { type: "string", multiple: true },
} as const;

/**
 * `--mirror-namespaces` (repeatable, comma-separated): the namespaces Mirrors may target, or undefined when the flag
 * is not given (unrestricted but for kube-system, kube-public and kube-node-lease). Exits 2 (FlagError) on a name
 * that is not a namespace name, or on a flag given with no name at all.
 */
export function parseMirrorNamespaces(values: FlagValues): string[] | undefined {
  if (values["mirror-namespaces"] === undefined) return undefined;
  const names = commaList(values["mirror-namespaces"]);
  if (!names.length) {
    throw new FlagError("invalid --mirror-namespaces: give at least one namespace name, e.g. --mirror-namespaces apps");
  }
  const bad = names.find((n) => !DNS_LABEL.test(n) || n.length > 63);
  if (bad !== undefined) {
    throw new FlagError(
      `invalid --mirror-namespaces "${bad}": each must be a namespace name (a lowercase DNS label, e.g. apps)`,
    );
  }
  return [...new Set(names)];
}

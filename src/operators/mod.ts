// The built-in operators, by the name `--operators` selects them with. Adding one is one line here.

import type { Operator } from "../sdk/mod.ts";
import { mirrorOperator } from "./mirror/mod.ts";
import { uuidOperator } from "./uuid/mod.ts";

/** What a built-in operator's factory may use: the hub's home cluster and its own flags. */
export interface BuiltInContext {
  /** The home cluster's name (see `homeCluster()` in src/cli/cluster_selection.ts). */
  homeCluster: string;
  /** `--mirror-orphan-on-unreachable-after`, in ms. */
  mirrorOrphanOnUnreachableAfterMs?: number;
  /** `--mirror-namespaces`: the only target namespaces of Mirrors (undefined: any but the system namespaces). */
  mirrorNamespaces?: readonly string[];
}

/** Each built-in operator's factory, by name. */
export const BUILT_IN_OPERATORS: Readonly<Record<string, (context: BuiltInContext) => Operator>> = {
  uuid: () => uuidOperator(),
  mirror: (c) =>
    mirrorOperator({
      homeCluster: c.homeCluster,
      orphanOnUnreachableAfterMs: c.mirrorOrphanOnUnreachableAfterMs,
      namespaces: c.mirrorNamespaces,
    }),
};

/**
 * What runs without `--operators`: every built-in operator. The Mirror needs its CRD in the home cluster only (its
 * Mirrors live there); the other clusters need just the verbs on the copies.
 */
export const DEFAULT_OPERATORS: readonly string[] = Object.keys(BUILT_IN_OPERATORS);

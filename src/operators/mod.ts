// The built-in operators, by the name `--operators` selects them with. Adding one is one line here.

import type { Operator } from "../sdk/mod.ts";
import { mirrorOperator } from "./mirror/mod.ts";
import { uuidOperator } from "./uuid/mod.ts";

/**
 * What a built-in operator's factory may use: the hub's home cluster and its own flags.
 *
 * @example
 * ```ts
 * import { BUILT_IN_OPERATORS, type BuiltInContext, DEFAULT_OPERATORS } from "../../hub.ts";
 *
 * const context: BuiltInContext = { homeCluster: "prod", mirrorNamespaces: ["shop"] };
 * const operators = DEFAULT_OPERATORS.map((name) => BUILT_IN_OPERATORS[name](context));
 * console.log(operators.map((op) => op.name)); // ["uuid", "mirror"]
 * ```
 */
export interface BuiltInContext {
  /** The home cluster's name (see `homeCluster()` in src/cli/startup/cluster_selection.ts). */
  homeCluster: string;
  /** `--mirror-orphan-on-unreachable-after`, in ms. */
  mirrorOrphanOnUnreachableAfterMs?: number;
  /** `--mirror-namespaces`: the only target namespaces of Mirrors (undefined: any but the system namespaces). */
  mirrorNamespaces?: readonly string[];
}

/**
 * Each built-in operator's factory, by name.
 *
 * @example
 * ```ts
 * import { BUILT_IN_OPERATORS, Hub, Logger } from "../../hub.ts";
 *
 * const mirror = BUILT_IN_OPERATORS["mirror"]({ homeCluster: "prod", mirrorOrphanOnUnreachableAfterMs: 60_000 });
 * const hub = new Hub({ operators: [mirror], logger: new Logger({ level: "info" }) });
 * console.log(Object.keys(BUILT_IN_OPERATORS)); // ["uuid", "mirror"]
 * ```
 */
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
 *
 * @example
 * ```ts
 * import { DEFAULT_OPERATORS } from "../../hub.ts";
 *
 * console.log(DEFAULT_OPERATORS); // ["uuid", "mirror"]: what runs without --operators
 * ```
 */
export const DEFAULT_OPERATORS: readonly string[] = Object.keys(BUILT_IN_OPERATORS);

// The built-in operators, by the name `--operators` selects them with. Adding one is one line here.

import type { Operator } from "../sdk/mod.ts";
import { mirrorOperator } from "./mirror/mod.ts";
import { uuidOperator } from "./uuid/mod.ts";

/** What a built-in operator's factory may use: the hub's home cluster and its own flags. */
export interface BuiltInContext {
  /** The home cluster's name (see `homeCluster()` in src/main.ts). */
  homeCluster: string;
  /** `--mirror-orphan-on-unreachable-after`, in ms. */
  mirrorOrphanOnUnreachableAfterMs?: number;
}

/** Each built-in operator's factory, by name. */
export const BUILT_IN_OPERATORS: Readonly<Record<string, (context: BuiltInContext) => Operator>> = {
  uuid: () => uuidOperator(),
  mirror: (c) =>
    mirrorOperator({ homeCluster: c.homeCluster, orphanOnUnreachableAfterMs: c.mirrorOrphanOnUnreachableAfterMs }),
};

/** What runs without `--operators`: the Mirror is opt-in (`--operators uuid,mirror`), as it needs its CRD and RBAC. */
export const DEFAULT_OPERATORS: readonly string[] = ["uuid"];

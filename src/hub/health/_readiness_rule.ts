// Which clusters hold readiness back and which are trusted: the rule the Hub applies to each health entry.

import type { ClusterHealth } from "./cluster_health.ts";
import type { ClusterRegistration } from "./hub_health.ts";
import type { HubReadiness } from "../hub_options.ts";
import { withGenericConnectErrors } from "../cluster/_untrusted_errors.ts";

/**
 * Whether a registration is the command line's (trusted): none at all (the embedder's own `engage`), else its
 * `commandLine`, else provider `flag`.
 */
export function isCommandLine(r: Partial<ClusterRegistration> | undefined): boolean {
  return r ? r.commandLine ?? r.provider === "flag" : true;
}

/**
 * Guarantees: a cluster gates readiness when it is the command line's, the home cluster, the Lease's cluster, a name
 * `--clusters` lists, or always with `clusters: "all"`; an untrusted cluster (not the command line's) shows its
 * connection errors as one generic reason, named or not, gating or not (trust and readiness are apart).
 */
export class ReadinessRule {
  readonly #all: boolean;
  readonly #always: ReadonlySet<string>;

  constructor(readiness: HubReadiness | undefined, leaseCluster: string | undefined) {
    this.#all = readiness?.clusters === "all";
    this.#always = new Set(
      [readiness?.home, leaseCluster, ...readiness?.named ?? []].filter((n): n is string => n !== undefined),
    );
  }

  /** `entry` as health shows it: `gatesReadiness` set, and generic connection errors unless `commandLine`. */
  apply(name: string, entry: ClusterHealth, commandLine: boolean): ClusterHealth {
    const out = commandLine ? entry : withGenericConnectErrors(entry);
    out.gatesReadiness = commandLine || this.#all || this.#always.has(name);
    return out;
  }
}

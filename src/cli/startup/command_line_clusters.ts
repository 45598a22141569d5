// Which registered clusters the command line defines (trusted): marked on each registration the registry hands on.

import { resolve } from "node:path";
import type { ClusterRegistration, RegistrationProblem } from "../../hub/mod.ts";
import type { EngageTarget } from "../../hub/providers/mod.ts";
import type { ClusterAccess } from "../../kube/mod.ts";

/**
 * `target` with `commandLine` set on every registration and held problem passed to it (ClusterRegistration.commandLine:
 * such a cluster holds readiness back and keeps its detailed errors; a name `--clusters` selects one by one holds it
 * back too, but that is HubReadiness.named, not trust: its errors stay generic when a provider registers it).
 *
 * Guarantees: a cluster registered by `flag` (`$KUBECONFIG`, `in-cluster`), or by the folder provider from one of
 * `kubeconfigs` (the `--kubeconfig` files, resolved against `cwd` as the folder provider resolves them; its access
 * names the file it came from), is the command line's; one from a Secret, a file dropped into the folder, a
 * ClusterProfile or a Cluster API Cluster is not. A held name is the command line's when its problem comes from `flag`
 * or when it was last engaged as the command line's (a `--kubeconfig` context that broke); a name `--clusters`
 * selects that no source registers yet is not (only a provider can register it later). Every call passes through.
 */
export function markingCommandLine(target: EngageTarget, kubeconfigs: readonly string[], cwd: string): EngageTarget {
  const files = new Set(kubeconfigs.map((f) => resolve(cwd, f)));
  const known = new Set<string>();
  const commandLine = (name: string, access: ClusterAccess, r: ClusterRegistration): boolean => {
    const mine = r.provider === "flag" || (r.provider === "folder" && files.has(access.source));
    if (mine) known.add(name);
    else known.delete(name);
    return mine;
  };
  const held = (name: string, p: RegistrationProblem): boolean => p.provider === "flag" || known.has(name);
  return {
    engage: (name, access, registration) =>
      target.engage(name, access, { ...registration, commandLine: commandLine(name, access, registration) }),
    disengage: (name) => target.disengage(name),
    hold: (name, problem) => target.hold(name, problem && { ...problem, commandLine: held(name, problem) }),
    ...(target.removed ? { removed: (name, access) => target.removed!(name, access) } : {}),
    ...(target.showProviders ? { showProviders: (read) => target.showProviders!(read) } : {}),
  };
}

// An EngageTarget with one more step when a cluster leaves the registry: the finalizer cleanup and the webhook
// configurations' removal both hook in this way.

import type { ClusterAccess } from "../../kube/mod.ts";
import type { EngageTarget } from "./registry.ts";

/**
 * `target`, whose `removed` also runs `step` once `target.removed` (if any) settled; every other call goes to `target`
 * unchanged, and `showProviders` exists exactly when `target` has it.
 *
 * Guarantees: `step` runs after the name was disengaged and after the hooks already on `target`, in the order they were
 * added; what `step` throws is what `removed` rejects with (both users catch their own failures).
 */
export function onRemoved(
  target: EngageTarget,
  step: (name: string, access: ClusterAccess) => Promise<void>,
): EngageTarget {
  return {
    engage: (name, access, registration) => target.engage(name, access, registration),
    disengage: (name) => target.disengage(name),
    hold: (name, problem) => target.hold(name, problem),
    ...(target.showProviders ? { showProviders: (read) => target.showProviders!(read) } : {}),
    async removed(name: string, access: ClusterAccess): Promise<void> {
      await target.removed?.(name, access);
      await step(name, access);
    },
  };
}

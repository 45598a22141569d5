// "No UUID ever changed", concluded only from an observer that proves it saw every object it speaks for.
//
// Guarantees: passes only if the observer met no error, saw a UUID on each of `expected` (waited for up to the hang
// guard, as its watch may trail the apiserver by a moment), and saw no object with two UUIDs.

import { type UuidObserver, waitFor } from "../../dev/support/cluster_api.ts";

/** Hang guard for the observer to catch up with objects already assigned at the apiserver. */
const CATCH_UP_GUARD_MS = 30_000;

/**
 * Waits until `observer` has seen a UUID on every name in `expected` (or met an error), then runs its
 * `assertStable`: an observer whose watch saw nothing, or failed, cannot pass a "nothing changed" check.
 */
export async function assertObservedStable(
  observer: UuidObserver,
  expected: Iterable<string>,
  label = observer.namespace,
  hangGuardMs = CATCH_UP_GUARD_MS,
): Promise<void> {
  const names = [...expected];
  if (names.length === 0) throw new Error(`${label}: no objects named to observe, so nothing could be concluded`);
  await waitFor(
    () => observer.errors.length > 0 || names.every((n) => observer.seen.has(n)),
    `${label}: the observer seeing a UUID on all ${names.length} objects`,
    hangGuardMs,
  ).catch(() => {/* assertStable below names what was missed */});
  observer.assertStable(names, label);
}

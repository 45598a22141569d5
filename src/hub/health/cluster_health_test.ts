// Type-level tests of the /status health entries: the contract's field names must stay on these types (deno test
// type-checks this file, so renaming or dropping a field fails it), plus the entry slotsHealth builds at run time.
import assert from "node:assert/strict";
import { slotsHealth } from "../cluster/_cluster_slot.ts";
import type { ClusterHealth, OperatorHealth, ProviderHealth } from "./cluster_health.ts";

/** The fields of a cluster entry that DESIGN.md's /status contract names (the JSON may add more, never drop these). */
const CLUSTER_FIELDS = [
  "state",
  "objects",
  "queue",
  "lastEventAgeSeconds",
  "lastError",
  "missingPermissions",
  "connectAttempts",
  "operators",
  "provider",
  "registeredAt",
] as const satisfies readonly (keyof ClusterHealth)[];

/** The fields of an operator entry inside a cluster entry, per the contract (checked by `satisfies`). */
const _OPERATOR_FIELDS = [
  "state",
  "objects",
  "queue",
  "lastError",
  "missingPermissions",
] as const satisfies readonly (keyof OperatorHealth)[];

/** The fields of a provider entry (checked by `satisfies`). */
const _PROVIDER_FIELDS = ["state", "watches", "clusters", "lastError", "errors"] as const satisfies readonly (
  keyof ProviderHealth
)[];

Deno.test("A cluster health entry built from no operators carries every field the /status contract requires", () => {
  const h: ClusterHealth = slotsHealth(new Map(), { now: 0, queueDepth: () => 0, queueTotal: 0, wedgedAfterMs: 1 });
  const optional = new Set<string>(["provider", "registeredAt"]);
  for (const field of CLUSTER_FIELDS) {
    if (!optional.has(field)) assert.ok(field in h, `missing ${field}`);
  }
});

Deno.test("The health types refuse a state outside the contract's list and require the nullable fields (checked by the type checker)", () => {
  // Each @ts-expect-error below fails type-checking of this file (and so this test) if the type starts accepting it.
  // @ts-expect-error -- "ready" is not a health state.
  const state: OperatorHealth["state"] = "ready";
  // @ts-expect-error -- lastError is required (null when there is none), as the /status contract shows it.
  const op: OperatorHealth = { state: "watching", synced: true, objects: 0, queue: 0, missingPermissions: [] };
  // @ts-expect-error -- a provider's errors name their source.
  const errors: ProviderHealth["errors"] = [{ error: "no kubeconfig key" }];
  assert.deepEqual([state, op.state, errors.length], ["ready", "watching", 1]);
});

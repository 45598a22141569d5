// Unit tests of the health entries of clusters registered but not engaged (pure).

import assert from "node:assert/strict";
import { notEngagedHealth, registrationOf } from "./hub_health.ts";

Deno.test("notEngagedHealth() shows the cluster and each operator registering and not synced, with the problem as lastError", () => {
  const h = notEngagedHealth(["uuid", "mirror"], "name collision: folder and secret");
  assert.equal(h.state, "registering");
  assert.equal(h.synced, false);
  assert.equal(h.lastError, "name collision: folder and secret");
  assert.deepEqual(Object.keys(h.operators ?? {}), ["uuid", "mirror"]);
  for (const op of Object.values(h.operators ?? {})) {
    assert.equal(op.state, "registering");
    assert.equal(op.synced, false);
    assert.equal(op.lastError, "name collision: folder and secret");
  }
  const pending = notEngagedHealth(new Set(["uuid"]).keys(), null);
  assert.equal(pending.lastError, null);
  assert.equal(pending.operators?.uuid.lastError, null);
});

Deno.test("notEngagedHealth() answers a fresh entry each time, so one cluster's entry never changes another's", () => {
  const a = notEngagedHealth(["uuid"], null);
  const b = notEngagedHealth(["uuid"], null);
  a.operators!.uuid.objects = 5;
  a.missingPermissions.push("list uuid");
  assert.equal(b.operators!.uuid.objects, 0);
  assert.deepEqual(b.missingPermissions, []);
});

Deno.test("registrationOf() keeps only the provider and registeredAt that are set, never a problem's error", () => {
  assert.deepEqual(registrationOf({ provider: "secret", registeredAt: "2026-12-03T00:00:00Z" }), {
    provider: "secret",
    registeredAt: "2026-12-03T00:00:00Z",
  });
  const problem = { error: "two contexts named prod", provider: "folder" };
  assert.deepEqual(registrationOf(problem), { provider: "folder" });
  assert.deepEqual(registrationOf({}), {});
});

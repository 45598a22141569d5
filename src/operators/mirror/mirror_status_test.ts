import assert from "node:assert/strict";
import { nextStatus, refusedStatus, sameStatus } from "./mirror_status.ts";

const ctx = (now: string) => ({ generation: 1, source: "ConfigMap/settings", now });

Deno.test("nextStatus counts InSync rows, sets Ready, and is unchanged (no write) when the outcomes are the same", () => {
  const first = nextStatus(undefined, [
    { cluster: "staging", state: "InSync", lastError: null, syncedTo: "5" },
    { cluster: "dev", state: "Unreachable", lastError: "connection refused" },
  ], ctx("2026-01-01T00:00:00Z"));
  assert.equal(first.synced, "1/2");
  assert.deepEqual(first.targets.map((t) => t.cluster), ["dev", "staging"]);
  assert.equal(first.conditions[0].status, "False");
  assert.equal(first.targets[1].lastSyncTime, "2026-01-01T00:00:00Z");
  const again = nextStatus(first, [
    { cluster: "dev", state: "Unreachable", lastError: "connection refused" },
    { cluster: "staging", state: "InSync", lastError: null, syncedTo: "5" },
  ], ctx("2026-01-01T00:05:00Z"));
  assert.ok(sameStatus(first, again), JSON.stringify(again));
});

Deno.test("nextStatus moves lastSyncTime and the Ready transition only when a row's sync or readiness changes", () => {
  const first = nextStatus(undefined, [{ cluster: "dev", state: "InSync", lastError: null, syncedTo: "5" }], ctx("T1"));
  const moved = nextStatus(first, [{ cluster: "dev", state: "InSync", lastError: null, syncedTo: "6" }], ctx("T2"));
  assert.equal(moved.targets[0].lastSyncTime, "T2");
  assert.equal(moved.targets[0].observedSourceResourceVersion, "6");
  assert.equal(moved.conditions[0].lastTransitionTime, "T1", "still Ready: no transition");
  const down = nextStatus(moved, [{ cluster: "dev", state: "Unreachable", lastError: "x" }], ctx("T3"));
  assert.equal(down.targets[0].lastSyncTime, "T2", "the last successful sync is kept");
  assert.equal(down.targets[0].observedSourceResourceVersion, "6");
  assert.equal(down.conditions[0].status, "False");
  assert.equal(down.conditions[0].lastTransitionTime, "T3");
  assert.ok(!sameStatus(moved, down));
});

Deno.test("refusedStatus reads state Error with the reason, no rows, and is unchanged when refused again", () => {
  const ok = nextStatus(undefined, [{ cluster: "dev", state: "InSync", lastError: null, syncedTo: "5" }], ctx("T1"));
  assert.equal(ok.state, "Ok");
  assert.equal(ok.message, "1 of 1 target clusters in sync");
  const refused = refusedStatus(ok, "NamespaceNotAllowed", "target namespace x is not allowed", ctx("T2"));
  assert.equal(refused.state, "Error");
  assert.equal(refused.message, "target namespace x is not allowed");
  assert.deepEqual(refused.targets, []);
  assert.deepEqual(
    [refused.conditions[0].status, refused.conditions[0].reason, refused.conditions[0].lastTransitionTime],
    ["False", "NamespaceNotAllowed", "T2"],
  );
  const again = refusedStatus(refused, "NamespaceNotAllowed", "target namespace x is not allowed", ctx("T3"));
  assert.ok(sameStatus(refused, again), JSON.stringify(again));
  const fixed = nextStatus(refused, [{ cluster: "dev", state: "InSync", lastError: null, syncedTo: "5" }], ctx("T4"));
  assert.equal(fixed.state, "Ok", "a merge patch of the next status overwrites state and message");
});

// Unit tests for defineOperator(): what it passes on and which definitions it refuses.
import assert from "node:assert/strict";
import { defineOperator } from "./define_operator.ts";

Deno.test("defineOperator() passes resourceClusters and onEngage on, and refuses a resourceClusters that is not a function", () => {
  const resource = { group: "examples.operator-hub.dev", version: "v1", kind: "FanOut", plural: "fanouts" };
  const reconcile = () => Promise.resolve();
  const onEngage = (cluster: string) => [{ cluster: "prod", namespace: "default", name: cluster }];
  const op = defineOperator({ name: "fan-out", resource, resourceClusters: (c) => c === "prod", onEngage, reconcile });
  assert.equal(op.resourceClusters?.("prod"), true);
  assert.equal(op.resourceClusters?.("dev"), false);
  assert.deepEqual(op.onEngage?.("dev", () => []), [{ cluster: "prod", namespace: "default", name: "dev" }]);
  assert.equal(defineOperator({ name: "plain", resource, reconcile }).resourceClusters, undefined);
  assert.throws(
    // deno-lint-ignore no-explicit-any -- a JavaScript caller's mistake
    () => defineOperator({ name: "bad", resource, resourceClusters: "prod" as any, reconcile }),
    /operator bad: resourceClusters must be a function \(cluster name → boolean\), got string/,
  );
});

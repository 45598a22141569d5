// Tests of RBAC rule matching for the rules review of a namespaced cluster's pre-flight.

import assert from "node:assert/strict";
import { allows } from "./rules_review.ts";

const check = (verb: string, resource: string, subresource?: string) => ({
  verb,
  group: "demo.operator",
  resource,
  ...(subresource ? { subresource } : {}),
  namespace: "a",
});

Deno.test("allows() matches verb, group and resource exactly, and a subresource only as resource/subresource", () => {
  const rule = { verbs: ["get", "list"], apiGroups: ["demo.operator"], resources: ["uuid"] };
  assert.equal(allows(rule, check("list", "uuid")), true);
  assert.equal(allows(rule, check("watch", "uuid")), false);
  assert.equal(allows(rule, check("list", "mirrors")), false);
  assert.equal(allows(rule, { ...check("list", "uuid"), group: "" }), false);
  assert.equal(allows(rule, check("get", "uuid", "status")), false);
  assert.equal(
    allows({ ...rule, verbs: ["patch"], resources: ["uuid/status"] }, check("patch", "uuid", "status")),
    true,
  );
});

Deno.test("allows() honours * for verbs, groups, resources and */subresource, and never a rule limited to names", () => {
  assert.equal(allows({ verbs: ["*"], apiGroups: ["*"], resources: ["*"] }, check("patch", "uuid", "status")), true);
  assert.equal(
    allows({ verbs: ["patch"], apiGroups: ["*"], resources: ["*/status"] }, check("patch", "uuid", "status")),
    true,
  );
  assert.equal(
    allows(
      { verbs: ["get"], apiGroups: ["demo.operator"], resources: ["uuid"], resourceNames: ["x"] },
      check("get", "uuid"),
    ),
    false,
  );
});

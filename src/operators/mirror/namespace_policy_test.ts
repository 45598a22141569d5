import assert from "node:assert/strict";
import { namespacePolicy, SYSTEM_NAMESPACES } from "./namespace_policy.ts";

Deno.test("namespacePolicy() without a list refuses the system namespaces only and may create namespaces", () => {
  const p = namespacePolicy(undefined);
  for (const ns of SYSTEM_NAMESPACES) assert.match(p.refusal(ns) ?? "", new RegExp(`"${ns}" is a system namespace`));
  assert.equal(p.refusal("apps"), undefined);
  assert.equal(p.createsNamespaces, true);
  assert.equal(namespacePolicy([]).createsNamespaces, true, "an empty list is no list");
});

Deno.test("namespacePolicy() with a list refuses every other namespace, naming it and the list, and creates none", () => {
  const p = namespacePolicy(["apps", "shared"]);
  assert.equal(p.refusal("apps"), undefined);
  assert.equal(
    p.refusal("billing"),
    'target namespace "billing" is not allowed: --mirror-namespaces allows apps, shared',
  );
  assert.match(p.refusal("kube-system")!, /"kube-system" is not allowed/);
  assert.equal(p.createsNamespaces, false);
});

Deno.test("namespacePolicy() allows a system namespace that the list names explicitly", () => {
  assert.equal(namespacePolicy(["kube-public"]).refusal("kube-public"), undefined);
  assert.ok(namespacePolicy(["kube-public"]).refusal("kube-system"));
});

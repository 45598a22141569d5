// Unit tests for the admission wiring: the pre-flight addition only when admission is on.
import assert from "node:assert/strict";
import { admissionPermissions } from "./admission_setup.ts";
import { parseFlags } from "../flags/parse_flags.ts";

Deno.test("admissionPermissions() adds the configurations' RBAC only with --webhook-bind-address", () => {
  assert.deepEqual(admissionPermissions(parseFlags(["--clusters", "prod"]).webhook), []);
  const on = admissionPermissions(parseFlags(["--clusters", "prod", "--webhook-bind-address", ":9443"]).webhook);
  assert.equal(on.length, 12);
  assert.ok(on.some((c) => c.verb === "watch" && c.resource === "validatingwebhookconfigurations"));
});

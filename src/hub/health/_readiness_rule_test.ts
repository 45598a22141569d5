// Unit tests of the readiness rule: who gates readiness, who is trusted, and the two kept apart.
import assert from "node:assert/strict";
import type { ClusterHealth } from "./cluster_health.ts";
import { notEngagedHealth, type RegistrationProblem } from "./hub_health.ts";
import { isCommandLine, ReadinessRule } from "./_readiness_rule.ts";
import { CANNOT_CONNECT } from "../cluster/_untrusted_errors.ts";

const down = (): ClusterHealth => ({
  ...notEngagedHealth([], "connect ECONNREFUSED 10.0.0.1:22"),
  state: "unreachable",
});

Deno.test("isCommandLine() trusts no registration, `flag`, and an explicit commandLine; nothing else", () => {
  assert.equal(isCommandLine(undefined), true);
  assert.equal(isCommandLine({ provider: "flag" }), true);
  assert.equal(isCommandLine({ provider: "folder", commandLine: true }), true);
  assert.equal(isCommandLine({ provider: "flag", commandLine: false }), false);
  for (const provider of ["folder", "secret", "cluster-profile", "cluster-api"]) {
    assert.equal(isCommandLine({ provider }), false, provider);
  }
  const held: RegistrationProblem = { error: "selected but not registered" };
  assert.equal(isCommandLine(held), false);
});

Deno.test("ReadinessRule gates the command line's, the home, the Lease's and the named clusters, or every one with all", () => {
  const rule = new ReadinessRule({ home: "home", named: ["named"] }, "lease");
  const gates = (name: string, commandLine: boolean) => rule.apply(name, down(), commandLine).gatesReadiness;
  assert.equal(gates("prod", true), true);
  for (const n of ["home", "lease", "named"]) assert.equal(gates(n, false), true, n);
  assert.equal(gates("r-closed", false), false);
  assert.equal(new ReadinessRule({ clusters: "all" }, undefined).apply("r", down(), false).gatesReadiness, true);
});

Deno.test("ReadinessRule shows a named or home cluster that is untrusted with the generic reason all the same", () => {
  const rule = new ReadinessRule({ home: "home", named: ["named"] }, undefined);
  for (const n of ["home", "named", "other"]) assert.equal(rule.apply(n, down(), false).lastError, CANNOT_CONNECT, n);
  assert.match(rule.apply("prod", down(), true).lastError ?? "", /ECONNREFUSED/);
});

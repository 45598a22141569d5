// The --leader-elect* flags, read through parseFlags() (which also checks the Lease cluster is selected).
import assert from "node:assert/strict";
import { FlagError, helpText, parseFlags } from "./flags.ts";

Deno.test("parseFlags() leaves leader election off by default, with controller-runtime's timings", () => {
  const f = parseFlags(["--clusters=a"]);
  assert.deepEqual(f.leaderElection, {
    enabled: false,
    id: "operator-hub.demo.operator",
    namespace: undefined,
    cluster: undefined,
    leaseDurationMs: 15_000,
    renewDeadlineMs: 10_000,
    retryPeriodMs: 2_000,
  });
});

Deno.test("parseFlags() reads every --leader-elect flag", () => {
  const f = parseFlags([
    "--clusters=a,b",
    "--leader-elect",
    "--leader-elect-id=my-hub",
    "--leader-elect-namespace=ops",
    "--leader-elect-cluster=b",
    "--leader-elect-lease-duration=30",
    "--leader-elect-renew-deadline=20",
    "--leader-elect-retry-period=4",
  ]);
  assert.deepEqual(f.leaderElection, {
    enabled: true,
    id: "my-hub",
    namespace: "ops",
    cluster: "b",
    leaseDurationMs: 30_000,
    renewDeadlineMs: 20_000,
    retryPeriodMs: 4_000,
  });
});

Deno.test("parseFlags() rejects leader-election timings client-go would reject, naming both flags", () => {
  assert.throws(
    () => parseFlags(["--clusters=a", "--leader-elect-lease-duration=10"]),
    (e: Error) =>
      e instanceof FlagError && /--leader-elect-lease-duration 10/.test(e.message) && /renew-deadline/.test(e.message),
  );
  assert.throws(
    () => parseFlags(["--clusters=a", "--leader-elect-retry-period=9"]),
    (e: Error) =>
      e instanceof FlagError && /--leader-elect-renew-deadline 10/.test(e.message) && /retry-period/.test(e.message),
  );
  assert.throws(() => parseFlags(["--clusters=a", "--leader-elect-retry-period=0"]), /positive number of seconds/);
  assert.throws(() => parseFlags(["--clusters=a", "--leader-elect-id=Not_Valid"]), /DNS subdomain/);
  assert.throws(() => parseFlags(["--clusters=a", "--leader-elect-namespace=a.b"]), /DNS label/);
  assert.throws(
    () => parseFlags(["--clusters=a", "--leader-elect-cluster=z"]),
    (e: Error) => e instanceof FlagError && /"z"/.test(e.message) && /a/.test(e.message),
  );
});

Deno.test("helpText() documents every leader-election flag", () => {
  for (const f of ["id", "namespace", "cluster", "lease-duration", "renew-deadline", "retry-period"]) {
    assert.match(helpText(), new RegExp(`--leader-elect-${f} `));
  }
  assert.match(helpText(), /--leader-elect {2,}/);
});

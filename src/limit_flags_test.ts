// The numeric limit flags, read through parseFlags().
import assert from "node:assert/strict";
import { FlagError, parseFlags } from "./flags.ts";

Deno.test("parseFlags() converts second-based limits to milliseconds", () => {
  const f = parseFlags(["--clusters=all", "--reconcile-timeout=2.5", "--concurrency=4"]);
  assert.equal(f.limits.reconcileTimeoutMs, 2500);
  assert.equal(f.limits.concurrency, 4);
});

Deno.test("parseFlags() rejects zero, negative and non-numeric limits with the flag's name", () => {
  assert.throws(() => parseFlags(["--clusters=a", "--qps", "-5"]), /invalid --qps "-5": must be a positive number/);
  for (const bad of ["0", "-1", "abc", "1.5"]) {
    assert.throws(
      () => parseFlags(["--clusters=a", `--concurrency=${bad}`]),
      (e: Error) => e instanceof FlagError && e.message.includes("--concurrency") && e.message.includes(bad),
    );
  }
});

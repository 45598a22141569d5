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

Deno.test("parseFlags() reads --max-object-bytes as bytes or with a Ki, Mi or Gi suffix", () => {
  assert.equal(parseFlags(["--clusters=a", "--max-object-bytes=1048576"]).limits.maxObjectBytes, 1048576);
  assert.equal(parseFlags(["--clusters=a", "--max-object-bytes", "512Ki"]).limits.maxObjectBytes, 512 * 1024);
  assert.equal(parseFlags(["--clusters=a", "--max-object-bytes=8Mi"]).limits.maxObjectBytes, 8 * 1024 * 1024);
  assert.equal(parseFlags(["--clusters=a", "--max-object-bytes=1Gi"]).limits.maxObjectBytes, 1024 ** 3);
  assert.equal(parseFlags(["--clusters=a"]).limits.maxObjectBytes, undefined, "the hub's default applies");
});

Deno.test("parseFlags() rejects a --max-object-bytes that is not a positive whole size with one line naming the flag and the forms", () => {
  for (const bad of ["0", "-5", "4MB", "1.5Mi", "Mi", "4 Mi Mi", "", "4mi"]) {
    assert.throws(
      () => parseFlags(["--clusters=a", "--max-object-bytes", bad]),
      (e: Error) =>
        e instanceof FlagError && !e.message.includes("\n") &&
        e.message.startsWith(`invalid --max-object-bytes "${bad}": must be a positive whole number of bytes`) &&
        e.message.includes("Ki, Mi or Gi"),
      bad,
    );
  }
});

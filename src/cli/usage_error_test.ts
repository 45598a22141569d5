// Unit tests of the usage error: its name, and the one stderr line and exit code 2 main() answers with.

import assert from "node:assert/strict";
import { printUsageError, UsageError } from "./usage_error.ts";

Deno.test("UsageError names itself", () => {
  const err = new UsageError("invalid --liveness");
  assert.equal(err.name, "UsageError");
  assert.equal(err.message, "invalid --liveness");
});

Deno.test("printUsageError() writes one prefixed line on stderr and answers 2", () => {
  const lines: unknown[][] = [];
  const original = console.error;
  console.error = (...args: unknown[]) => lines.push(args);
  try {
    assert.equal(printUsageError('unknown context "x"'), 2);
  } finally {
    console.error = original;
  }
  assert.deepEqual(lines, [['operator-hub: error: unknown context "x"']]);
});

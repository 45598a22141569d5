// Unit tests for the reconciler contract's error class.
import assert from "node:assert/strict";
import { TerminalError } from "./reconciler.ts";

Deno.test("TerminalError is an Error named TerminalError that keeps its message and chained cause", () => {
  const cause = new Error("422 Invalid");
  const err = new TerminalError("spec.size must be positive, got -1", { cause });
  assert.ok(err instanceof Error);
  assert.equal(err.name, "TerminalError");
  assert.equal(err.message, "spec.size must be positive, got -1");
  assert.equal(err.cause, cause);
  assert.match(String(err), /^TerminalError: spec\.size must be positive/);
});

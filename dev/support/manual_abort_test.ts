// Tests for the TestAbort test fixture: hooks run once on the first abort, with its reason.

import assert from "node:assert/strict";
import { TestAbort } from "./manual_abort.ts";

Deno.test("TestAbort runs each hook once on the first abort and keeps that reason", () => {
  const a = new TestAbort();
  const seen: unknown[] = [];
  a.onAbort(() => seen.push(a.aborted));
  a.onAbort(() => seen.push("second"));
  assert.equal(a.aborted, undefined);
  a.abort("first reason");
  a.abort("later reason");
  assert.deepEqual(seen, ["first reason", "second"]);
  assert.equal(a.aborted, "first reason");
});

Deno.test("TestAbort ignores hooks added after the abort, and aborts with an Error when given no reason", () => {
  const a = new TestAbort();
  a.abort();
  assert.ok(a.aborted instanceof Error && /aborted by the test/.test(a.aborted.message));
  let ran = false;
  a.onAbort(() => (ran = true));
  assert.equal(ran, false);
});

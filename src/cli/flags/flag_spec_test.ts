// The builders of the flag table's rows: what each row reads by default, and the section stamped on a group of rows.

import assert from "node:assert/strict";
import { DEFAULT_LIMITS } from "../../hub/hub_limits.ts";
import { bool, type Flag, limit, list, seconds, section, text } from "./flag_spec.ts";
import { FlagError } from "./flag_values.ts";

const read = <T>(f: Flag<T>, raw: unknown) => (f.read as (raw: unknown, name: string) => T)(raw, "x");

Deno.test("bool(), text() and list() read a flag as given when the row brings no check of its own", () => {
  assert.equal(read(bool({ help: "h" }), undefined), false);
  assert.equal(read(bool({ help: "h" }), true), true);
  assert.equal(read(text({ arg: "A", help: "h" }), undefined), undefined);
  assert.equal(read(text({ arg: "A", help: "h" }), "v"), "v");
  assert.deepEqual(read(list({ arg: "A", help: "h" }), undefined), [], "a list flag not given is empty");
  assert.deepEqual(read(list({ arg: "A", help: "h" }), ["a", "b"]), ["a", "b"]);
  assert.deepEqual([bool({ help: "h" }).kind, text({ help: "h" }).kind, list({ help: "h" }).kind], [
    "boolean",
    "string",
    "list",
  ]);
});

Deno.test("section() stamps its heading on every row of the group and keeps their order", () => {
  const rows = section("Things:", { b: bool({ help: "b" }), a: text({ arg: "A", help: "a" }) });
  assert.deepEqual(Object.keys(rows), ["b", "a"]);
  assert.deepEqual(Object.values(rows).map((f) => f.section), ["Things:", "Things:"]);
});

Deno.test("seconds() reads positive seconds in milliseconds, its default when absent", () => {
  const f = seconds("15", "how long");
  assert.equal(f.default, "15");
  assert.equal(read(f, "2.5"), 2500);
  assert.throws(() => read(f, "0"), FlagError);
});

Deno.test("limit() leaves an absent limit to the hub, documents the hub's default, and refuses what is not positive", () => {
  const timeout = limit("reconcileTimeoutMs", "SECONDS", "before a reconcile is abandoned");
  assert.equal(read(timeout, undefined), undefined);
  assert.equal(read(timeout, "2"), 2000);
  assert.equal(timeout.defaultText, String(DEFAULT_LIMITS.reconcileTimeoutMs / 1000));
  assert.equal(timeout.signed, true, "`--reconcile-timeout -1` reaches the check, not the tokenizer");
  const burst = limit("clusterBurst", "WHOLE", "burst");
  assert.throws(() => read(burst, "1.5"), /^FlagError: invalid --x "1.5": must be a positive whole number$/);
  assert.equal(read(limit("maxObjectBytes", "SIZE", "size"), "2Ki"), 2048);
});

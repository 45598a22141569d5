// The checks every flag group shares: positive seconds, comma lists, Kubernetes names.

import assert from "node:assert/strict";
import { commaList, DNS_LABEL, DNS_SUBDOMAIN, FlagError, positiveSeconds } from "./flag_values.ts";

Deno.test("positiveSeconds() converts seconds to whole milliseconds and falls back when the flag is absent", () => {
  assert.equal(positiveSeconds({}, "x", 42), 42);
  assert.equal(positiveSeconds({ x: "1.5" }, "x", 42), 1500);
  assert.equal(positiveSeconds({ x: "0.0004" }, "x", 42), 0, "rounded");
});

Deno.test("positiveSeconds() rejects zero, negative, empty and non-numeric values, naming the flag and the value", () => {
  for (const bad of ["0", "-1", "", " ", "abc", "Infinity"]) {
    assert.throws(() => positiveSeconds({ "drain-after": bad }, "drain-after", 1), (e: Error) => {
      assert.ok(e instanceof FlagError);
      assert.equal(e.message, `invalid --drain-after "${bad}": must be a positive number of seconds`);
      return true;
    });
  }
});

Deno.test("commaList() splits repeated values at commas, trims them and drops empties", () => {
  assert.deepEqual(commaList(["a,b", " c ", ",,d,"]), ["a", "b", "c", "d"]);
  assert.deepEqual(commaList(undefined), []);
});

Deno.test("DNS_LABEL and DNS_SUBDOMAIN accept Kubernetes' lowercase names and nothing else", () => {
  for (const ok of ["a", "ops", "a-1"]) assert.ok(DNS_LABEL.test(ok), ok);
  for (const bad of ["", "A", "a.b", "-a", "a-", "a_b"]) assert.ok(!DNS_LABEL.test(bad), bad);
  for (const ok of ["a", "a.b", "operator-hub.demo.operator"]) assert.ok(DNS_SUBDOMAIN.test(ok), ok);
  for (const bad of ["", "a..b", ".a", "a.", "Not_Valid"]) assert.ok(!DNS_SUBDOMAIN.test(bad), bad);
});

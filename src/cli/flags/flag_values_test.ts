// The readers the flag table's checks share: positive seconds, comma lists, Kubernetes names, addresses, sizes.

import assert from "node:assert/strict";
import {
  commaList,
  DNS_LABEL,
  DNS_SUBDOMAIN,
  FlagError,
  isNamespace,
  parseBindAddress,
  parseByteSize,
  parseLiveness,
  positiveSeconds,
} from "./flag_values.ts";

Deno.test("positiveSeconds() converts seconds to whole milliseconds", () => {
  assert.equal(positiveSeconds("1.5", "x"), 1500);
  assert.equal(positiveSeconds("0.0004", "x"), 0, "rounded");
});

Deno.test("positiveSeconds() rejects zero, negative, empty and non-numeric values, naming the flag and the value", () => {
  for (const bad of ["0", "-1", "", " ", "abc", "Infinity"]) {
    assert.throws(() => positiveSeconds(bad, "drain-after"), (e: Error) => {
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

Deno.test("DNS_LABEL, DNS_SUBDOMAIN and isNamespace() accept Kubernetes' lowercase names and nothing else", () => {
  for (const ok of ["a", "ops", "a-1"]) assert.ok(DNS_LABEL.test(ok), ok);
  for (const bad of ["", "A", "a.b", "-a", "a-", "a_b"]) assert.ok(!DNS_LABEL.test(bad), bad);
  for (const ok of ["a", "a.b", "operator-hub.demo.operator"]) assert.ok(DNS_SUBDOMAIN.test(ok), ok);
  for (const bad of ["", "a..b", ".a", "a.", "Not_Valid"]) assert.ok(!DNS_SUBDOMAIN.test(bad), bad);
  assert.ok(isNamespace("a".repeat(63)));
  assert.ok(!isNamespace("a".repeat(64)), "at most 63 characters");
});

Deno.test("parseBindAddress() reads controller-runtime's HOST:PORT forms and names the flag on a bad one", () => {
  assert.deepEqual(parseBindAddress(":8443", "x", 1), { hostname: "0.0.0.0", port: 8443 });
  assert.deepEqual(parseBindAddress("[::]:9", "x", 1), { hostname: "::", port: 9 });
  assert.deepEqual(parseBindAddress("localhost:0", "x", 1), { hostname: "localhost", port: 0 });
  assert.throws(
    () => parseBindAddress("8443", "webhook-bind-address", 9443),
    /^FlagError: invalid --webhook-bind-address "8443": expected HOST:PORT, e.g. :9443, 127.0.0.1:9443 or \[::\]:9443$/,
  );
});

Deno.test("parseByteSize() reads whole bytes with an optional binary suffix, and nothing else", () => {
  assert.equal(parseByteSize("4Mi"), 4 * 1024 * 1024);
  assert.equal(parseByteSize("512"), 512);
  for (const bad of ["0", "4MB", "1.5Mi", "-1", "4mi"]) assert.equal(parseByteSize(bad), undefined, bad);
});

Deno.test("parseLiveness() accepts Kopf's form and rejects other schemes and junk", () => {
  assert.deepEqual(parseLiveness("http://0.0.0.0:8080/healthz"), { hostname: "0.0.0.0", port: 8080, path: "/healthz" });
  assert.deepEqual(parseLiveness("http://h/p"), { hostname: "h", port: 80, path: "/p" });
  assert.throws(() => parseLiveness("https://0.0.0.0:8080/healthz"), FlagError);
  assert.throws(() => parseLiveness("not a url"), FlagError);
});

import assert from "node:assert/strict";
import { clusterOf, InvalidKeyError, makeKey, splitKey } from "./key.ts";

Deno.test("makeKey() joins cluster, namespace and name with slashes", () => {
  assert.equal(makeKey("prod", "default", "a"), "prod/default/a");
  assert.equal(makeKey("prod", "", "cluster-scoped"), "prod//cluster-scoped");
});

Deno.test("splitKey() returns the parts makeKey() joined", () => {
  assert.deepEqual(splitKey(makeKey("staging", "ns-1", "my.uuid")), {
    cluster: "staging",
    namespace: "ns-1",
    name: "my.uuid",
  });
  assert.deepEqual(splitKey("dev//x"), { cluster: "dev", namespace: "", name: "x" });
});

Deno.test("splitKey() throws InvalidKeyError naming a key without three parts", () => {
  for (const bad of ["", "prod", "prod/x", "/ns/x", "prod/ns/", "prod/ns/a/b"]) {
    assert.throws(() => splitKey(bad), (err: unknown) => {
      assert.ok(err instanceof InvalidKeyError);
      assert.equal(err.name, "InvalidKeyError");
      assert.ok(err.message.includes(JSON.stringify(bad)), err.message);
      return true;
    });
  }
});

Deno.test("makeKey() rejects parts that contain a slash or are empty", () => {
  assert.throws(() => makeKey("a/b", "ns", "n"), InvalidKeyError);
  assert.throws(() => makeKey("", "ns", "n"), InvalidKeyError);
  assert.throws(() => makeKey("c", "n/s", "n"), InvalidKeyError);
  assert.throws(() => makeKey("c", "ns", ""), InvalidKeyError);
});

Deno.test("clusterOf() returns the part before the first slash", () => {
  assert.equal(clusterOf("prod/ns/name"), "prod");
  assert.equal(clusterOf("prod//name"), "prod");
  assert.throws(() => clusterOf("no-slash"), InvalidKeyError);
  assert.throws(() => clusterOf("/ns/name"), InvalidKeyError);
});

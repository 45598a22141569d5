import assert from "node:assert/strict";
import { clusterOf, InvalidKeyError, makeKey, operatorOf, splitKey } from "./key.ts";

Deno.test("makeKey() joins cluster, operator, namespace and name with slashes", () => {
  assert.equal(makeKey("prod", "uuid", "default", "a"), "prod/uuid/default/a");
  assert.equal(makeKey("prod", "uuid", "", "cluster-scoped"), "prod/uuid//cluster-scoped");
});

Deno.test("splitKey() returns the parts makeKey() joined", () => {
  assert.deepEqual(splitKey(makeKey("staging", "greeting", "ns-1", "my.uuid")), {
    cluster: "staging",
    operator: "greeting",
    namespace: "ns-1",
    name: "my.uuid",
  });
  assert.deepEqual(splitKey("dev/uuid//x"), { cluster: "dev", operator: "uuid", namespace: "", name: "x" });
});

Deno.test("makeKey() and splitKey() keep a cluster name that holds slashes (an inventory's namespace/name)", () => {
  const key = makeKey("capi#fleet/edge-1", "uuid", "ns", "a");
  assert.equal(key, "capi#fleet/edge-1/uuid/ns/a");
  assert.deepEqual(splitKey(key), { cluster: "capi#fleet/edge-1", operator: "uuid", namespace: "ns", name: "a" });
  assert.deepEqual(splitKey(makeKey("a/b/c", "op", "", "x")), {
    cluster: "a/b/c",
    operator: "op",
    namespace: "",
    name: "x",
  });
  assert.equal(clusterOf(key), "capi#fleet/edge-1");
  assert.equal(operatorOf(key), "uuid");
  assert.equal(clusterOf(makeKey("x/y", "op", "", "n")), "x/y");
});

Deno.test("splitKey() throws InvalidKeyError naming a key without four parts", () => {
  for (const bad of ["", "prod", "prod/x", "prod/ns/x", "/op/ns/x", "prod//ns/x", "prod/op/ns/"]) {
    assert.throws(() => splitKey(bad), (err: unknown) => {
      assert.ok(err instanceof InvalidKeyError);
      assert.equal(err.name, "InvalidKeyError");
      assert.ok(err.message.includes(JSON.stringify(bad)), err.message);
      return true;
    });
  }
});

Deno.test("makeKey() rejects parts that contain a slash or are empty", () => {
  assert.throws(() => makeKey("", "op", "ns", "n"), InvalidKeyError);
  assert.throws(() => makeKey("c", "", "ns", "n"), InvalidKeyError);
  assert.throws(() => makeKey("c", "o/p", "ns", "n"), InvalidKeyError);
  assert.throws(() => makeKey("c", "op", "n/s", "n"), InvalidKeyError);
  assert.throws(() => makeKey("c", "op", "ns", ""), InvalidKeyError);
});

Deno.test("clusterOf() and operatorOf() return the first and second parts", () => {
  assert.equal(clusterOf("prod/uuid/ns/name"), "prod");
  assert.equal(operatorOf("prod/uuid/ns/name"), "uuid");
  assert.equal(operatorOf("prod/uuid//name"), "uuid");
  assert.throws(() => clusterOf("no-slash"), InvalidKeyError);
  assert.throws(() => clusterOf("/op/ns/name"), InvalidKeyError);
  assert.throws(() => clusterOf("op/ns/name"), InvalidKeyError);
  assert.throws(() => operatorOf("prod//ns/name"), InvalidKeyError);
});

import assert from "node:assert/strict";
import { InvalidKeyError, keyId, type QueueKey } from "./key.ts";

function key(cluster: string, operator: string, namespace: string, name: string): QueueKey {
  return { operator, request: { cluster, namespace, name } };
}

Deno.test("keyId() is the same for keys with equal parts and different for keys that differ in any part", () => {
  assert.equal(keyId(key("prod", "uuid", "default", "a")), keyId(key("prod", "uuid", "default", "a")));
  const ids = [
    key("prod", "uuid", "default", "a"),
    key("staging", "uuid", "default", "a"),
    key("prod", "greeting", "default", "a"),
    key("prod", "uuid", "other", "a"),
    key("prod", "uuid", "", "a"),
    key("prod", "uuid", "default", "b"),
  ].map(keyId);
  assert.equal(new Set(ids).size, ids.length);
});

Deno.test("keyId() keeps keys apart whose cluster names hold slashes (an inventory's namespace/name)", () => {
  const ids = [
    key("capi#fleet/edge-1", "uuid", "ns", "a"),
    key("capi#fleet", "edge-1", "ns", "a"),
    key("a/b/c", "op", "", "x"),
    key("a/b", "c", "op", "x"),
    key("a", "b", "c", "x"),
  ].map(keyId);
  assert.equal(new Set(ids).size, ids.length);
});

Deno.test("keyId() refuses parts that would make two keys share an id", () => {
  assert.throws(() => keyId(key("", "op", "ns", "a")), InvalidKeyError);
  assert.throws(() => keyId(key("prod", "", "ns", "a")), InvalidKeyError);
  assert.throws(() => keyId(key("prod", "a/b", "ns", "a")), InvalidKeyError);
  assert.throws(() => keyId(key("prod", "op", "n/s", "a")), InvalidKeyError);
  assert.throws(() => keyId(key("prod", "op", "ns", "")), InvalidKeyError);
  assert.throws(() => keyId(key("prod", "op", "ns", "a/b")), /name must be non-empty without "\/", got "a\/b"/);
});

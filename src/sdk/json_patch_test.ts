// Unit tests for jsonPatch(): the diff a mutating webhook answers, checked against an RFC 6902 apply.
import assert from "node:assert/strict";
import fc from "fast-check";
import { applyJsonPatch, equal, jsonPatch } from "./json_patch.ts";

Deno.test("jsonPatch() gives no operation for equal values", () => {
  assert.deepEqual(jsonPatch({ a: 1, b: [1, { c: 2 }] }, { b: [1, { c: 2 }], a: 1 }), []);
});

Deno.test("jsonPatch() adds, replaces and removes only the keys that changed", () => {
  const ops = jsonPatch(
    { metadata: { name: "x", labels: { a: "1" } }, spec: { image: "nginx", gone: true } },
    { metadata: { name: "x", labels: { a: "2", b: "3" } }, spec: { image: "nginx", content: "hi" } },
  );
  assert.deepEqual(ops, [
    { op: "replace", path: "/metadata/labels/a", value: "2" },
    { op: "add", path: "/metadata/labels/b", value: "3" },
    { op: "remove", path: "/spec/gone" },
    { op: "add", path: "/spec/content", value: "hi" },
  ]);
});

Deno.test("jsonPatch() escapes ~ and / in keys as RFC 6901 says", () => {
  const ops = jsonPatch({ metadata: { annotations: {} } }, { metadata: { annotations: { "a.io/x~y": "v" } } });
  assert.deepEqual(ops, [{ op: "add", path: "/metadata/annotations/a.io~1x~0y", value: "v" }]);
  assert.deepEqual(applyJsonPatch({ metadata: { annotations: {} } }, ops), {
    metadata: { annotations: { "a.io/x~y": "v" } },
  });
});

Deno.test("jsonPatch() replaces an array that differs whole, and a value whose type changed", () => {
  assert.deepEqual(jsonPatch({ a: [1, 2] }, { a: [1, 3] }), [{ op: "replace", path: "/a", value: [1, 3] }]);
  assert.deepEqual(jsonPatch({ a: { b: 1 } }, { a: "x" }), [{ op: "replace", path: "/a", value: "x" }]);
  assert.deepEqual(jsonPatch({ a: null }, { a: 0 }), [{ op: "replace", path: "/a", value: 0 }]);
});

Deno.test("jsonPatch() treats undefined object values as absent", () => {
  assert.deepEqual(jsonPatch({ a: 1 }, { a: 1, b: undefined }), []);
  assert.deepEqual(jsonPatch({ a: 1, b: 2 }, { a: 1, b: undefined }), [{ op: "remove", path: "/b" }]);
});

Deno.test("jsonPatch() result applied to the source equals the target, for any JSON objects", () => {
  const json = fc.jsonValue({ maxDepth: 4 });
  const obj = fc.dictionary(fc.string({ maxLength: 4 }), json, { maxKeys: 5 });
  fc.assert(
    fc.property(obj, obj, (a, b) => {
      const from = JSON.parse(JSON.stringify(a));
      const to = JSON.parse(JSON.stringify(b));
      return equal(applyJsonPatch(from, jsonPatch(from, to)), to);
    }),
    { numRuns: 300 },
  );
});

Deno.test("applyJsonPatch() refuses a path that does not resolve", () => {
  assert.throws(() => applyJsonPatch({}, [{ op: "replace", path: "/a/b", value: 1 }]), /does not resolve/);
});

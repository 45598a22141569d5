import assert from "node:assert/strict";
import { FlagError } from "./flag_values.ts";
import { parseMirrorNamespaces } from "./mirror_flags.ts";

Deno.test("parseMirrorNamespaces() is undefined without the flag and joins repeated, comma-separated names once", () => {
  assert.equal(parseMirrorNamespaces({}), undefined);
  assert.deepEqual(parseMirrorNamespaces({ "mirror-namespaces": ["apps,shared", "apps"] }), ["apps", "shared"]);
});

Deno.test("parseMirrorNamespaces() refuses a name that is not a namespace name, and an empty list, naming the flag", () => {
  assert.throws(() => parseMirrorNamespaces({ "mirror-namespaces": ["apps,Kube_System"] }), (e: Error) => {
    assert.ok(e instanceof FlagError);
    assert.match(e.message, /--mirror-namespaces "Kube_System"/);
    return true;
  });
  assert.throws(() => parseMirrorNamespaces({ "mirror-namespaces": [","] }), /--mirror-namespaces: give at least one/);
});

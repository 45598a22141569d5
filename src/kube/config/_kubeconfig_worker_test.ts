// Tests of the kubeconfig worker's answers: the document, or one line naming the path, never the text.

import assert from "node:assert/strict";
import { answer } from "./_kubeconfig_worker.ts";

Deno.test("The kubeconfig worker answers a request with its id and the document, parsed under the untrusted rules", () => {
  assert.deepEqual(answer({ id: 7, path: "/secret ns/a", text: "apiVersion: v1\nclusters: []\n" }), {
    id: 7,
    doc: { apiVersion: "v1", clusters: [] },
  });
  const refused = answer({ id: 8, path: "/secret ns/b", text: "a: &x [s3cret]\nb: *x\n" });
  assert.equal(refused.id, 8);
  assert.ok("error" in refused);
  assert.match(refused.error, /^invalid kubeconfig \/secret ns\/b: uses a YAML alias \(line 2\)/);
  assert.doesNotMatch(refused.error, /s3cret/);
});

Deno.test("The kubeconfig worker honours a request's own size cap, and names any other failure by its kind only", () => {
  const big = answer({ id: 1, path: "/f", text: "token: " + "a".repeat(100), maxBytes: 64 });
  assert.ok("error" in big && /107 bytes, larger than 64 bytes/.test(big.error));
  // No text at all: not a parse error, so the answer names the failure's kind only.
  const odd = answer({ id: 2, path: "/g", text: null as unknown as string });
  assert.ok("error" in odd);
  assert.match(odd.error, /^invalid kubeconfig \/g: cannot be parsed \(\w+\)$/);
});

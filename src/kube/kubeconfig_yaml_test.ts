// Tests of kubeconfig YAML parsed under limits: size, flow nesting, alias bombs, and errors that never quote the text.

import assert from "node:assert/strict";
import { ConfigError } from "./errors.ts";
import { flowDepthOver, MAX_KUBECONFIG_DEPTH, parseKubeconfigYaml } from "./kubeconfig_yaml.ts";

Deno.test("parseKubeconfigYaml refuses 200,000 levels of brackets at once, without handing them to the parser", () => {
  const deep = "x: " + "[".repeat(200_000) + "]".repeat(200_000);
  const started = performance.now();
  assert.throws(() => parseKubeconfigYaml("/c/deep.yaml", deep), (err: Error) => {
    assert.ok(err instanceof ConfigError);
    assert.match(err.message, /^invalid kubeconfig \/c\/deep.yaml: nested more than 64 levels deep \(line 1\)$/);
    return true;
  });
  // A bound on work, not a timing test: the parser itself needs seconds for this document.
  assert.ok(performance.now() - started < 2_000, "refused by the scan, not by the parser");
});

Deno.test("parseKubeconfigYaml parses a kubeconfig whose strings and comments hold brackets", () => {
  const text = [
    "# a comment with [[[[ and {{{{",
    "users:",
    "- name: u",
    "  user:",
    "    exec:",
    '      args: [\'{"a": [[[1]]]}\', "[[[[\\"]]"]',
    "contexts: [{name: c, context: {cluster: c, user: u}}]",
  ].join("\n");
  const doc = parseKubeconfigYaml("/c/ok.yaml", text) as { contexts: { name: string }[] };
  assert.equal(doc.contexts[0].name, "c");
  assert.equal(flowDepthOver(text, 3), undefined);
  assert.deepEqual(flowDepthOver("a: " + "{".repeat(MAX_KUBECONFIG_DEPTH + 1), MAX_KUBECONFIG_DEPTH), { line: 1 });
});

Deno.test("parseKubeconfigYaml refuses untrusted text over its size cap and an alias bomb, naming the file only", () => {
  assert.throws(
    () => parseKubeconfigYaml("secret ns/big", "token: " + "a".repeat(2048), { maxBytes: 1024 }),
    /^ConfigError: invalid kubeconfig secret ns\/big: larger than 1024 bytes, the limit for a kubeconfig$/,
  );
  assert.doesNotThrow(() => parseKubeconfigYaml("secret ns/small", "token: abc", { maxBytes: 1024 }));
  const lines = ["a: &a [x, x, x, x, x, x, x, x, x, x]"];
  for (let i = 1; i < 12; i++) {
    lines.push(
      `${String.fromCharCode(97 + i)}: &${String.fromCharCode(97 + i)} [${
        Array(10).fill(`*${String.fromCharCode(96 + i)}`).join(", ")
      }]`,
    );
  }
  assert.throws(() => parseKubeconfigYaml("/c/bomb.yaml", lines.join("\n")), /invalid kubeconfig \/c\/bomb.yaml/);
  assert.throws(() => parseKubeconfigYaml("/c/bad.yaml", "token: s3cret\n  : : ["), (err: Error) => {
    assert.match(err.message, /^invalid kubeconfig \/c\/bad.yaml: not valid YAML \(line/);
    assert.doesNotMatch(err.message, /s3cret/);
    return true;
  });
});

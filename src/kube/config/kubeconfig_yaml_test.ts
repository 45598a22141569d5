// Tests of kubeconfig YAML parsed under limits: size, flow nesting, aliases, entries, and errors that never quote the
// text.

import assert from "node:assert/strict";
import { ConfigError } from "../errors.ts";
import {
  flowDepthOver,
  MAX_KUBECONFIG_DEPTH,
  MAX_UNTRUSTED_KUBECONFIG_BYTES,
  MAX_UNTRUSTED_KUBECONFIG_ENTRIES,
  oversized,
  parseKubeconfigYaml,
} from "./kubeconfig_yaml.ts";

/** A kubeconfig of `n` contexts, users and clusters, as block YAML. */
function contexts(n: number): string {
  const lines = ["apiVersion: v1", "kind: Config", "clusters:"];
  for (let i = 0; i < n; i++) lines.push(`- name: c${i}`, "  cluster:", "    server: https://127.0.0.1:6443");
  lines.push("users:");
  for (let i = 0; i < n; i++) lines.push(`- name: c${i}`, "  user:", "    token: s3cret");
  lines.push("contexts:");
  for (let i = 0; i < n; i++) lines.push(`- name: c${i}`, "  context:", `    cluster: c${i}`, `    user: c${i}`);
  return lines.join("\n") + "\n";
}

/** `pairs` anchors, each aliased once, after a one-context kubeconfig: quadratic in the `yaml` package. */
function anchorPadded(pairs: number): string {
  const out = [contexts(1), "x-pad:"];
  for (let i = 0; i < pairs; i++) out.push(`- &a${i} [v]`, `- *a${i}`);
  return out.join("\n") + "\n";
}

Deno.test("parseKubeconfigYaml refuses 200,000 levels of brackets at once, without handing them to the parser", () => {
  const deep = "x: " + "[".repeat(200_000) + "]".repeat(200_000);
  const started = performance.now();
  for (const untrusted of [false, true]) {
    assert.throws(() => parseKubeconfigYaml("/c/deep.yaml", deep, { untrusted, maxBytes: 1e6 }), (err: Error) => {
      assert.ok(err instanceof ConfigError);
      assert.match(err.message, /^invalid kubeconfig \/c\/deep.yaml: nested more than 64 levels deep \(line 1\)$/);
      return true;
    });
  }
  // A bound on work, not a timing test: the parser itself needs seconds for this document.
  assert.ok(performance.now() - started < 2_000, "refused by the scan, not by the parser");
});

Deno.test("parseKubeconfigYaml parses a kubeconfig whose strings and comments hold brackets, trusted or not", () => {
  const text = [
    "# a comment with [[[[ and {{{{",
    "users:",
    "- name: u",
    "  user:",
    "    exec:",
    '      args: [\'{"a": [[[1]]]}\', "[[[[\\"]]"]',
    "contexts: [{name: c, context: {cluster: c, user: u}}]",
  ].join("\n");
  for (const untrusted of [false, true]) {
    const doc = parseKubeconfigYaml("/c/ok.yaml", text, { untrusted }) as { contexts: { name: string }[] };
    assert.equal(doc.contexts[0].name, "c");
  }
  assert.equal(flowDepthOver(text, 3), undefined);
  assert.deepEqual(flowDepthOver("a: " + "{".repeat(MAX_KUBECONFIG_DEPTH + 1), MAX_KUBECONFIG_DEPTH), { line: 1 });
});

Deno.test("parseKubeconfigYaml reads untrusted text as the trusted parser does: the same document, null for an empty one", () => {
  const text = contexts(3) + "preferences: {}\ncurrent-context: c1\nx-numbers: [1, 2.5, true, null, '07', 0x1F]\n";
  assert.deepEqual(parseKubeconfigYaml("/a", text, { untrusted: true }), parseKubeconfigYaml("/a", text));
  for (const empty of ["", "# only a comment\n", "\n\n"]) {
    assert.equal(parseKubeconfigYaml("/e", empty, { untrusted: true }), null);
    assert.equal(parseKubeconfigYaml("/e", empty), null);
  }
});

Deno.test("parseKubeconfigYaml refuses untrusted text over its size cap before parsing it, naming the size and the cap", () => {
  assert.throws(
    () => parseKubeconfigYaml("secret ns/big", "token: " + "a".repeat(2048), { untrusted: true, maxBytes: 1024 }),
    /^ConfigError: invalid kubeconfig secret ns\/big: 2055 bytes, larger than 1024 bytes, the limit for an untrusted kubeconfig$/,
  );
  assert.doesNotThrow(() => parseKubeconfigYaml("secret ns/small", "token: abc", { untrusted: true, maxBytes: 1024 }));
  // Bytes, not characters: 400 three-byte characters are 1,200 bytes.
  assert.match(oversized("€".repeat(400), 1024) ?? "", /^1200 bytes, larger than 1024 bytes/);
  assert.equal(oversized("€".repeat(300), 1024), undefined);
  assert.equal(MAX_UNTRUSTED_KUBECONFIG_BYTES, 256 * 1024);
  // Trusted text has no size cap.
  assert.doesNotThrow(() => parseKubeconfigYaml("/c/big.yaml", contexts(1) + `x: ${"a".repeat(300_000)}\n`));
});

Deno.test("parseKubeconfigYaml refuses an alias in untrusted text with one line naming its line, never the text; trusted text keeps its aliases", () => {
  const text = anchorPadded(3);
  assert.throws(() => parseKubeconfigYaml("secret ns/a", text, { untrusted: true }), (err: Error) => {
    assert.ok(err instanceof ConfigError);
    assert.equal(
      err.message,
      "invalid kubeconfig secret ns/a: uses a YAML alias (line 19), which an untrusted kubeconfig may not; " +
        "write each entry out in full",
    );
    return true;
  });
  assert.deepEqual((parseKubeconfigYaml("/c/a.yaml", text) as { "x-pad": unknown[] })["x-pad"].slice(0, 2), [["v"], [
    "v",
  ]]);
  // An anchor alone names a node and changes nothing: read as it is.
  const anchored = parseKubeconfigYaml("secret ns/b", "a: &x [1]\nb: c\n", { untrusted: true });
  assert.deepEqual(anchored, { a: [1], b: "c" });
  // An alias to an anchor never defined is refused as an alias too, and the name is not echoed.
  assert.throws(
    () => parseKubeconfigYaml("secret ns/c", "token: *s3cret\n", { untrusted: true }),
    (err: Error) => /uses a YAML alias \(line 1\)/.test(err.message) && !err.message.includes("s3cret"),
  );
});

Deno.test("parseKubeconfigYaml judges 24,000 anchors each aliased once in time linear in the text (the yaml package takes minutes)", () => {
  const text = anchorPadded(24_000);
  assert.ok(text.length > 400_000, `${text.length} characters`);
  const started = performance.now();
  assert.throws(() => parseKubeconfigYaml("secret ns/pad", text, { untrusted: true, maxBytes: 2e6 }), /YAML alias/);
  // A bound on work, not a timing test: the quadratic parser needs over a minute for this text.
  assert.ok(performance.now() - started < 20_000, `judged in ${performance.now() - started} ms`);
});

Deno.test("parseKubeconfigYaml refuses an alias bomb in untrusted text at its first alias, and the trusted parser refuses it too", () => {
  const lines = ["a: &a [x, x, x, x, x, x, x, x, x, x]"];
  for (let i = 1; i < 12; i++) {
    const [name, prev] = [String.fromCharCode(97 + i), String.fromCharCode(96 + i)];
    lines.push(`${name}: &${name} [${Array(10).fill(`*${prev}`).join(", ")}]`);
  }
  assert.throws(
    () => parseKubeconfigYaml("secret ns/bomb", lines.join("\n"), { untrusted: true }),
    /^ConfigError: invalid kubeconfig secret ns\/bomb: uses a YAML alias \(line 2\)/,
  );
  assert.throws(
    () => parseKubeconfigYaml("/c/bomb.yaml", lines.join("\n")),
    /^ConfigError: invalid kubeconfig \/c\/bomb.yaml: uses more than 100 YAML aliases \(line 12\)$/,
  );
});

Deno.test("parseKubeconfigYaml refuses untrusted text with more contexts, users or clusters than the cap, naming the list and the cap", () => {
  assert.doesNotThrow(() =>
    parseKubeconfigYaml("secret ns/ok", contexts(MAX_UNTRUSTED_KUBECONFIG_ENTRIES), {
      untrusted: true,
    })
  );
  assert.throws(
    () => parseKubeconfigYaml("secret ns/many", contexts(MAX_UNTRUSTED_KUBECONFIG_ENTRIES + 1), { untrusted: true }),
    new RegExp(
      `^ConfigError: invalid kubeconfig secret ns/many: ${
        MAX_UNTRUSTED_KUBECONFIG_ENTRIES + 1
      } contexts, more than the ${MAX_UNTRUSTED_KUBECONFIG_ENTRIES} an untrusted kubeconfig may hold$`,
    ),
  );
  const users = `users: [${Array(MAX_UNTRUSTED_KUBECONFIG_ENTRIES + 5).fill("{name: u}").join(", ")}]\n`;
  assert.throws(() => parseKubeconfigYaml("/c/u.yaml", users, { untrusted: true }), /205 users, more than the 200/);
  // Trusted text has no cap.
  assert.doesNotThrow(() => parseKubeconfigYaml("/c/many.yaml", contexts(MAX_UNTRUSTED_KUBECONFIG_ENTRIES + 1)));
});

Deno.test("parseKubeconfigYaml refuses 20,000 keys with a duplicate in untrusted text quickly, naming the line (the yaml package compares every pair)", () => {
  const keys = ["x-keys:"];
  for (let i = 0; i < 20_000; i++) keys.push(`  k${i}: 1`);
  keys.push("  k7: 2");
  const started = performance.now();
  assert.throws(
    () => parseKubeconfigYaml("secret ns/keys", keys.join("\n"), { untrusted: true }),
    /^ConfigError: invalid kubeconfig secret ns\/keys: not valid YAML \(line 20002, column 3, duplicated mapping key\)$/,
  );
  assert.ok(performance.now() - started < 20_000, `judged in ${performance.now() - started} ms`);
});

Deno.test("parseKubeconfigYaml never quotes the text in its errors, trusted or not", () => {
  // 150 levels of block nesting are an error in untrusted text only (trusted text may nest 1,000 deep).
  const bad: [string, RegExp, "untrusted" | "both"][] = [
    ["token: s3cret\n  : : [", /not valid YAML \(line 2, column 3/, "both"],
    ["a: 1\n---\nb: s3cret\n", /not valid YAML/, "both"],
    ["a: !s3cret x\n", /^invalid kubeconfig \/c\/bad.yaml: not valid YAML \(line 1, column 4\)$/, "both"],
    [
      "a:\n" + Array.from({ length: 150 }, (_, i) => `${" ".repeat(i + 2)}s3cret${i}:`).join("\n") + " 1\n",
      /not valid YAML \(line 100, column 101, nesting exceeded maxDepth \(100\)\)$/,
      "untrusted",
    ],
  ];
  for (const [text, pattern, which] of bad) {
    for (const untrusted of which === "both" ? [false, true] : [true]) {
      assert.throws(() => parseKubeconfigYaml("/c/bad.yaml", text, { untrusted }), (err: Error) => {
        assert.ok(err instanceof ConfigError, String(err));
        assert.match(err.message, /^invalid kubeconfig \/c\/bad.yaml: /);
        if (untrusted) assert.match(err.message, pattern);
        assert.doesNotMatch(err.message, /s3cret/);
        assert.doesNotMatch(err.message, /\n/);
        return true;
      }, `${untrusted ? "untrusted" : "trusted"}: ${JSON.stringify(text.slice(0, 30))}`);
    }
  }
});

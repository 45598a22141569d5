// Tests for the CLI tests' kubeconfig file: it holds exactly the contexts asked for, in a fresh file each time.
import assert from "node:assert/strict";
import { parse } from "yaml";
import { kubeconfigFile } from "./kubeconfig_file.ts";

Deno.test("kubeconfigFile() writes a fresh file with exactly the given contexts on one made-up server", () => {
  const a = kubeconfigFile(["prod", "staging"], "kc-test-");
  const b = kubeconfigFile([], "kc-test-");
  try {
    assert.notEqual(a, b);
    const doc = parse(Deno.readTextFileSync(a));
    assert.deepEqual(doc.contexts.map((c: { name: string }) => c.name), ["prod", "staging"]);
    assert.equal(doc.clusters[0].cluster.server, "https://127.0.0.1:1");
    assert.deepEqual(parse(Deno.readTextFileSync(b)).contexts, []);
  } finally {
    Deno.removeSync(a);
    Deno.removeSync(b);
  }
});

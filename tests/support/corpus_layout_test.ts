// Unit tests for laying a corpus out into folder files and Secrets.
// deno-lint-ignore-file no-explicit-any -- parsed YAML and manifests are inspected field by field.
import assert from "node:assert/strict";
import { parse } from "yaml";
import { KUBECONFIG_SECRET_LABEL, layoutCorpus } from "./corpus_layout.ts";
import { type CorpusWorld, generateCorpus } from "./kubeconfig_mutations.ts";

const CA = "-----BEGIN CERTIFICATE-----\nQUJD\n-----END CERTIFICATE-----\n";
const ep = { server: "https://127.0.0.1:16001", caPem: CA, token: "t".repeat(64) };
const WORLD: CorpusWorld = {
  endpoints: { prod: ep, staging: ep, dev: ep },
  attacker: { http: "http://127.0.0.1:17000", https: "https://127.0.0.1:17000" },
  markerFile: "/t/marker.token",
  allowedPlugin: "/t/bin/corpus-plugin",
  allowedName: "corpus-plugin",
  evilPathDir: "/t/evil",
  forbiddenPlugin: "/t/clusters/forbidden-plugin.sh",
  namespace: "corpus-ns",
  reserved: ["in-cluster", "prod", "staging", "dev"],
};
const CORPUS = generateCorpus(WORLD, { seed: 11, count: 300 });

Deno.test("layoutCorpus() batches shareable folder cases into files of at most perFile contexts, each case's context kept", () => {
  const layout = layoutCorpus(CORPUS.cases, { clusterDir: "/d", namespace: "ns", perFile: 20 });
  const shareable = CORPUS.cases.filter((c) => c.entries);
  assert.ok(shareable.length > 40);
  const docs = new Map<string, any>();
  for (const c of shareable) {
    const file = layout.files.find((f) => f.path === layout.sources.get(c.id)!.source)!;
    assert.match(file.path, /^\/d\/batch-\d+\.yaml$/);
    if (!docs.has(file.path)) docs.set(file.path, parse(new TextDecoder().decode(file.bytes)));
    const doc = docs.get(file.path);
    assert.ok(doc.contexts.length <= 20 * 2 + 20, file.path); // a case may add a duplicate or a second context
    assert.ok(doc.contexts.some((x: any) => x.name === c.name), `case ${c.id}'s context is in ${file.path}`);
  }
});

Deno.test("layoutCorpus() gives every other folder case its own file with its bytes, and every Secret case one labelled Secret", () => {
  const layout = layoutCorpus(CORPUS.cases, { clusterDir: "/d", namespace: "ns" });
  for (const c of CORPUS.cases) {
    const source = layout.sources.get(c.id)!.source;
    if (c.provider === "secret") {
      assert.equal(source, `ns/${c.name}`);
      const s = layout.secrets.find((m: any) => m.metadata.name === c.name) as any;
      assert.equal(s.metadata.labels[KUBECONFIG_SECRET_LABEL], "true");
      assert.deepEqual(Uint8Array.from(atob(s.data.kubeconfig), (ch) => ch.charCodeAt(0)), c.bytes);
    } else if (!c.entries) {
      assert.equal(source, `/d/case-${c.id}.yaml`);
      assert.deepEqual(layout.files.find((f) => f.path === source)!.bytes, c.bytes);
    }
  }
  assert.equal(layout.sources.size, CORPUS.cases.length);
});

Deno.test("layoutCorpus() keeps a shared file within its byte budget, so no file of several cases is refused for its size", () => {
  const layout = layoutCorpus(CORPUS.cases, { clusterDir: "/d", namespace: "ns", bytesPerFile: 16 * 1024 });
  const shared = CORPUS.cases.filter((c) => c.entries);
  const byFile = new Map<string, number[]>();
  for (const c of shared) {
    const path = layout.sources.get(c.id)!.source;
    byFile.set(path, [...byFile.get(path) ?? [], c.bytes.length]);
  }
  for (const [path, sizes] of byFile) {
    const total = sizes.reduce((a, b) => a + b, 0);
    assert.ok(sizes.length === 1 || total <= 16 * 1024, `${path}: ${sizes.length} cases, ${total} bytes`);
  }
  assert.ok([...byFile.values()].some((s) => s.length > 1), "some files are still shared");
});

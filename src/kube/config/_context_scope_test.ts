// Tests of the namespaced-access opt-in read from a kubeconfig context's `operator-hub` extension.

import assert from "node:assert/strict";
import { contextNamespaceScope } from "./_context_scope.ts";
import { ConfigError } from "../errors.ts";
import { parseKubeconfigText } from "./kubeconfig_text.ts";

const optIn = (scope: unknown) => [{ name: "operator-hub", extension: { scope } }];

Deno.test("contextNamespaceScope() returns the context's namespace when its operator-hub extension asks for scope namespace", () => {
  assert.equal(contextNamespaceScope("ctx", { namespace: "tenant-a", extensions: optIn("namespace") }), "tenant-a");
});

Deno.test("contextNamespaceScope() leaves a context with only a namespace, another extension or scope cluster cluster-wide", () => {
  assert.equal(contextNamespaceScope("ctx", { namespace: "tenant-a" }), undefined);
  assert.equal(
    contextNamespaceScope("ctx", { namespace: "a", extensions: [{ name: "context_info", extension: {} }] }),
    undefined,
  );
  assert.equal(contextNamespaceScope("ctx", { namespace: "a", extensions: optIn("cluster") }), undefined);
});

Deno.test("contextNamespaceScope() rejects an unknown scope and scope namespace without a namespace, naming the choices", () => {
  assert.throws(
    () => contextNamespaceScope(`context "x"`, { namespace: "a", extensions: optIn("tenant") }),
    (e: Error) =>
      e instanceof ConfigError && /context "x".*"tenant".*expected "namespace".*or "cluster"/.test(e.message),
  );
  assert.throws(
    () => contextNamespaceScope(`context "x"`, { extensions: optIn("namespace") }),
    (e: Error) => e instanceof ConfigError && /sets no namespace/.test(e.message),
  );
  assert.throws(
    () => contextNamespaceScope(`context "x"`, { extensions: { name: "operator-hub" } }),
    (e: Error) => e instanceof ConfigError && /"extensions" must be a list/.test(e.message),
  );
});

const kubeconfig = (extension: string) => `
apiVersion: v1
kind: Config
clusters:
  - name: c
    cluster: { server: "https://127.0.0.1:6443", insecure-skip-tls-verify: true }
users:
  - name: u
    user: { token: "t" }
contexts:
  - name: tenant-a
    context:
      cluster: c
      user: u
      namespace: tenant-a
${extension}
`;

Deno.test("parseKubeconfigText() carries the opt-in to ClusterAccess.namespaceScope, and turning it on changes the endpoint digest", async () => {
  const plain = await parseKubeconfigText(kubeconfig(""), { source: "secret ns/a" });
  const scoped = await parseKubeconfigText(
    kubeconfig("      extensions:\n        - name: operator-hub\n          extension: { scope: namespace }"),
    { source: "secret ns/a" },
  );
  assert.equal(plain.contexts[0].access?.namespace, "tenant-a");
  assert.equal(plain.contexts[0].access?.namespaceScope, undefined);
  assert.equal(scoped.contexts[0].access?.namespaceScope, "tenant-a");
  // A change of scope re-engages the cluster (the registry compares endpoint digests), credentials are the same.
  assert.notEqual(plain.contexts[0].endpointDigest, scoped.contexts[0].endpointDigest);
  assert.equal(plain.contexts[0].credentialsDigest, scoped.contexts[0].credentialsDigest);
});

Deno.test("parseKubeconfigText() reports a bad scope as that context's error, not the document's", async () => {
  const doc = await parseKubeconfigText(
    kubeconfig("      extensions:\n        - name: operator-hub\n          extension: { scope: everything }"),
    { source: "secret ns/a" },
  );
  assert.equal(doc.contexts[0].access, undefined);
  assert.match(doc.contexts[0].error ?? "", /scope "everything"; expected "namespace"/);
});

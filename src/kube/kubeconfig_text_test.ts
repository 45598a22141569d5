// Tests of kubeconfig documents parsed from memory: per-context errors and the endpoint / credentials digests.

import assert from "node:assert/strict";
import { ConfigError } from "./errors.ts";
import { parseKubeconfigText } from "./kubeconfig_text.ts";

const doc = (opts: { server?: string; token?: string; contexts?: string[] } = {}) =>
  JSON.stringify({
    apiVersion: "v1",
    kind: "Config",
    clusters: [{ name: "c", cluster: { server: opts.server ?? "https://127.0.0.1:6443" } }],
    users: [{ name: "u", user: { token: opts.token ?? "token-one" } }],
    contexts: (opts.contexts ?? ["prod"]).map((name) => ({
      name,
      context: { cluster: name === "broken" ? "x" : "c", user: "u" },
    })),
    "current-context": "prod",
  });

Deno.test("parseKubeconfigText changes only the credentials digest when only the token changes", async () => {
  const a = (await parseKubeconfigText(doc(), { source: "secret ns/prod" })).contexts[0];
  const b = (await parseKubeconfigText(doc({ token: "token-two" }), { source: "secret ns/prod" })).contexts[0];
  assert.equal(a.endpointDigest, b.endpointDigest);
  assert.notEqual(a.credentialsDigest, b.credentialsDigest);
  assert.equal((await b.access!.auth()).headers.Authorization, "Bearer token-two");
  assert.equal(b.access!.source, "secret ns/prod");
});

Deno.test("parseKubeconfigText changes the endpoint digest when the server changes", async () => {
  const a = (await parseKubeconfigText(doc(), { source: "/tmp/a.yaml" })).contexts[0];
  const b = (await parseKubeconfigText(doc({ server: "https://127.0.0.1:7443" }), { source: "/tmp/a.yaml" }))
    .contexts[0];
  assert.notEqual(a.endpointDigest, b.endpointDigest);
});

Deno.test("parseKubeconfigText reports a broken context on that context only, and never quotes the token", async () => {
  const parsed = await parseKubeconfigText(doc({ contexts: ["prod", "broken"] }), { source: "secret ns/x" });
  assert.equal(parsed.currentContext, "prod");
  const [broken, prod] = parsed.contexts;
  assert.ok(prod.access);
  assert.equal(broken.access, undefined);
  assert.match(broken.error!, /context "broken" in secret ns\/x refers to cluster "x"/);
  assert.doesNotMatch(broken.error!, /token-one/);
});

Deno.test("parseKubeconfigText rejects text that is not YAML with a ConfigError naming the source, not the text", async () => {
  const err = await parseKubeconfigText("users: ][\n  token: secret-value", { source: "secret ns/y" }).catch((e) => e);
  assert.ok(err instanceof ConfigError);
  assert.match(err.message, /invalid kubeconfig secret ns\/y: not valid YAML/);
  assert.doesNotMatch(err.message, /secret-value/);
});

Deno.test("parseKubeconfigText with `untrusted` refuses a tokenFile context before reading the file, and trusts it without", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const tokenPath = `${dir}/token`;
    await Deno.writeTextFile(tokenPath, "hub-secret-token\n");
    const text = JSON.stringify({
      clusters: [{ name: "c", cluster: { server: "https://127.0.0.1:6443" } }],
      users: [{ name: "u", user: { tokenFile: tokenPath } }],
      contexts: [{ name: "x", context: { cluster: "c", user: "u" } }, {
        name: "ok",
        context: { cluster: "c", user: "inline" },
      }],
    }).replace('"users":[', '"users":[{"name":"inline","user":{"token":"t"}},');
    const untrusted = await parseKubeconfigText(text, {
      source: "secret ns/x",
      untrusted: { execAllowlist: [], allowHttpServers: false },
    });
    const x = untrusted.contexts.find((c) => c.name === "x")!;
    assert.equal(x.access, undefined);
    assert.match(x.error!, /^context "x" in secret ns\/x: user field tokenFile names a file on the hub's own disk/);
    assert.ok(untrusted.contexts.find((c) => c.name === "ok")!.access, "the other context is unaffected");
    const trusted = await parseKubeconfigText(text, { source: `${dir}/kubeconfig.yaml` });
    const auth = await trusted.contexts.find((c) => c.name === "x")!.access!.auth();
    assert.equal(auth.headers.Authorization, "Bearer hub-secret-token");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("parseKubeconfigText refuses auth-provider even in a trusted file, and drops URL user info from the server", async () => {
  const text = JSON.stringify({
    clusters: [{ name: "c", cluster: { server: "https://admin:hunter2@127.0.0.1:6443" } }],
    users: [{ name: "gcp", user: { "auth-provider": { name: "gcp", config: { "cmd-path": "sleep" } } } }, {
      name: "t",
      user: { token: "t" },
    }],
    contexts: [{ name: "g", context: { cluster: "c", user: "gcp" } }, {
      name: "t",
      context: { cluster: "c", user: "t" },
    }],
  });
  const parsed = await parseKubeconfigText(text, { source: "/tmp/k.yaml" });
  assert.match(
    parsed.contexts[0].error!,
    /uses auth-provider "gcp".*removed .* in 1\.26; use an exec credential plugin/,
  );
  assert.equal(parsed.contexts[1].access!.server, "https://127.0.0.1:6443");
});

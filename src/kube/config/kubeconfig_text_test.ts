// Tests of kubeconfig documents parsed from memory: per-context errors and the endpoint / credentials digests.

import assert from "node:assert/strict";
import { ConfigError } from "../errors.ts";
import { STRICT_CREDENTIAL_POLICY } from "./credential_policy.ts";
import { parseKubeconfigText } from "./kubeconfig_text.ts";
import { parseKubeconfigYaml } from "./kubeconfig_yaml.ts";
import { errorText } from "../../util/mod.ts";

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

Deno.test("parseKubeconfigText with `untrusted` runs an allowed exec plugin with PATH, HOME and its exec.env only, and stops a hung one at the exec time limit", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const dump = `${dir}/env`;
    const plugin = `${dir}/plugin.sh`;
    await Deno.writeTextFile(
      plugin,
      `#!/bin/sh\nenv > '${dump}'\n[ "$HANG" = yes ] && sleep 30\n` +
        `echo '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"from-plugin"}}'\n`,
      { mode: 0o700 },
    );
    const text = (hang: string) =>
      JSON.stringify({
        clusters: [{ name: "c", cluster: { server: "https://127.0.0.1:6443" } }],
        users: [{
          name: "u",
          user: {
            exec: {
              apiVersion: "client.authentication.k8s.io/v1",
              command: plugin,
              env: [{ name: "HANG", value: hang }],
            },
          },
        }],
        contexts: [{ name: "x", context: { cluster: "c", user: "u" } }],
      });
    const hubEnv = { PATH: Deno.env.get("PATH"), HOME: "/home/hub", HUB_SECRET: "must-not-leak" };
    const policy = { execAllowlist: [plugin], allowHttpServers: false };
    const ok = await parseKubeconfigText(text("no"), { source: "secret ns/x", env: hubEnv, untrusted: policy });
    assert.equal((await ok.contexts[0].access!.auth()).headers.Authorization, "Bearer from-plugin");
    const env = await Deno.readTextFile(dump);
    assert.match(env, /^HOME=\/home\/hub$/m);
    assert.match(env, /^HANG=no$/m);
    assert.doesNotMatch(env, /HUB_SECRET|must-not-leak/);
    const hung = await parseKubeconfigText(text("yes"), {
      source: "secret ns/x",
      env: hubEnv,
      untrusted: policy,
      execTimeoutMs: 300,
    });
    await assert.rejects(
      hung.contexts[0].access!.auth(),
      /exec credential plugin "plugin.sh" did not finish within 0.3 s/,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("parseKubeconfigText with `untrusted` runs an allowed bare plugin name from the hub's PATH, never from a folder the kubeconfig names", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const credential = (token: string) =>
      `#!/bin/sh\necho '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential",` +
      `"status":{"token":"${token}"}}'\n`;
    await Deno.mkdir(`${dir}/hub-bin`);
    await Deno.mkdir(`${dir}/evil`);
    await Deno.writeTextFile(`${dir}/hub-bin/corp-plugin`, credential("from-hub-path"), { mode: 0o700 });
    await Deno.writeTextFile(`${dir}/evil/corp-plugin`, credential("from-evil"), { mode: 0o700 });
    const text = (env: { name: string; value: string }[]) =>
      JSON.stringify({
        clusters: [{ name: "c", cluster: { server: "https://127.0.0.1:6443" } }],
        users: [{
          name: "u",
          user: { exec: { apiVersion: "client.authentication.k8s.io/v1", command: "corp-plugin", env } },
        }],
        contexts: [{ name: "x", context: { cluster: "c", user: "u" } }],
      });
    const policy = { execAllowlist: ["corp-plugin"], allowHttpServers: false };
    const env = { PATH: `${dir}/hub-bin:/usr/bin:/bin`, HOME: dir };
    const ok = await parseKubeconfigText(text([]), { source: "secret ns/x", env, untrusted: policy });
    assert.equal((await ok.contexts[0].access!.auth()).headers.Authorization, "Bearer from-hub-path");
    const evil = await parseKubeconfigText(text([{ name: "PATH", value: `${dir}/evil` }]), {
      source: "secret ns/x",
      env,
      untrusted: policy,
    });
    assert.equal(evil.contexts[0].access, undefined, "a kubeconfig that sets the plugin's PATH is refused");
    assert.match(evil.contexts[0].error ?? "", /exec.env sets "PATH"/);
    const missing = await parseKubeconfigText(text([]), {
      source: "secret ns/x",
      env: { PATH: "/usr/bin:/bin", HOME: dir },
      untrusted: policy,
    });
    assert.match(missing.contexts[0].error ?? "", /exec plugin "corp-plugin" is not an executable on the hub's PATH/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("parseKubeconfigText words a refused context's error on one line even when its name holds a newline", async () => {
  const text = JSON.stringify({
    clusters: [{ name: "c", cluster: { server: "http://127.0.0.1:6443" } }],
    users: [{ name: "u", user: { token: "t" } }],
    contexts: [{ name: "k1\nforged line", context: { cluster: "c", user: "u" } }],
  });
  const parsed = await parseKubeconfigText(text, {
    source: "secret ns/k1",
    untrusted: { execAllowlist: [], allowHttpServers: false },
  });
  const error = parsed.contexts[0].error ?? "";
  assert.match(error, /plain http/);
  assert.doesNotMatch(error, /\n/);
  assert.match(error, /k1\\nforged line/);
});

Deno.test("parseKubeconfigText refuses a context with both insecure-skip-tls-verify and proxy-url instead of going around the proxy", async () => {
  const text = JSON.stringify({
    clusters: [{
      name: "c",
      cluster: {
        server: "https://127.0.0.1:6443",
        "insecure-skip-tls-verify": true,
        "proxy-url": "socks5://127.0.0.1:9",
      },
    }],
    users: [{ name: "u", user: { token: "t" } }],
    contexts: [{ name: "x", context: { cluster: "c", user: "u" } }],
  });
  for (const untrusted of [undefined, { execAllowlist: [], allowHttpServers: false }]) {
    const parsed = await parseKubeconfigText(text, { source: "secret ns/x", untrusted });
    assert.equal(parsed.contexts[0].access, undefined);
    assert.match(parsed.contexts[0].error ?? "", /sets both insecure-skip-tls-verify and proxy-url/);
  }
});

// tls-server-name: the name checked against the real prod apiserver's certificate (SANs kubernetes,
// kubernetes.default, kubernetes.default.svc, 127.0.0.1) instead of the URL's host.
async function serverNameClient(tlsServerName: string | undefined, extra: Record<string, unknown> = {}) {
  const { adminToken, apiserverCa, apiserverUrl, requireClusters } = await import(
    "../../../dev/support/local_clusters.ts"
  );
  const { KubeClient } = await import("../client.ts");
  requireClusters();
  const text = JSON.stringify({
    apiVersion: "v1",
    kind: "Config",
    clusters: [{
      name: "c",
      cluster: {
        server: apiserverUrl("prod"),
        "certificate-authority-data": btoa(apiserverCa("prod")),
        ...(tlsServerName === undefined ? {} : { "tls-server-name": tlsServerName }),
        ...extra,
      },
    }],
    users: [{ name: "u", user: { token: adminToken("prod") } }],
    contexts: [{ name: "x", context: { cluster: "c", user: "u" } }],
  });
  const parsed = await parseKubeconfigText(text, { source: "secret ns/x", untrusted: STRICT_CREDENTIAL_POLICY });
  const ctx = parsed.contexts[0];
  if (!ctx.access) return { error: ctx.error };
  return { client: new KubeClient(ctx.access, { requestTimeoutMs: 10_000 }) };
}

Deno.test("tls-server-name is the name a real apiserver's certificate is checked against: a name it holds connects, another fails the TLS check", async () => {
  for (const name of [undefined, "kubernetes.default"]) {
    const { client, error } = await serverNameClient(name);
    assert.ok(client, `${name}: ${error}`);
    try {
      const version = await client.request<{ gitVersion: string }>("GET", "/version");
      assert.match(version.gitVersion, /^v1\./, `${name ?? "no name"}: /version`);
    } finally {
      client.close();
    }
  }
  const { client } = await serverNameClient("evil.example");
  assert.ok(client);
  try {
    // The URL's host (127.0.0.1) is in the certificate: only a check against evil.example can fail here.
    await assert.rejects(client.request("GET", "/version"), (err: Error) => {
      assert.doesNotMatch(String(err), /adminToken|Bearer/);
      return true;
    });
  } finally {
    client.close();
  }
});

Deno.test("tls-server-name is refused, naming the conflict, when it is malformed or set with a proxy-url or a client certificate", async () => {
  const { error: bad } = await serverNameClient("not a name!");
  assert.match(String(bad), /invalid tls-server-name/);
  const { error: proxied } = await serverNameClient("kubernetes", { "proxy-url": "http://127.0.0.1:3128" });
  assert.match(String(proxied), /both tls-server-name and proxy-url/);
  const text = JSON.stringify({
    apiVersion: "v1",
    kind: "Config",
    clusters: [{ name: "c", cluster: { server: "https://127.0.0.1:6443", "tls-server-name": "kubernetes" } }],
    users: [{
      name: "u",
      user: {
        "client-certificate-data": btoa("-----BEGIN CERTIFICATE-----\nQQ==\n-----END CERTIFICATE-----\n"),
        "client-key-data": btoa("-----BEGIN PRIVATE KEY-----\nQQ==\n-----END PRIVATE KEY-----\n"),
      },
    }],
    contexts: [{ name: "x", context: { cluster: "c", user: "u" } }],
  });
  const parsed = await parseKubeconfigText(text, { source: "secret ns/x" });
  assert.match(String(parsed.contexts[0].error), /tls-server-name .* client certificate/);
  assert.equal(parsed.contexts[0].access, undefined);
});

Deno.test("parseKubeconfigText refuses untrusted text under the untrusted rules, through a given parser, naming the source once", async () => {
  const calls: string[] = [];
  const parser = {
    parse: (path: string, text: string) => {
      calls.push(path);
      return Promise.resolve(parseKubeconfigYaml(path, text, { untrusted: true }));
    },
  };
  for (const viaParser of [false, true]) {
    await assert.rejects(
      parseKubeconfigText("a: &x [s3cret]\nb: *x\n", {
        source: "secret ns/a",
        untrusted: STRICT_CREDENTIAL_POLICY,
        ...(viaParser ? { parser } : {}),
      }),
      (err: Error) => {
        assert.ok(err instanceof ConfigError);
        assert.equal(
          errorText(err),
          "invalid kubeconfig secret ns/a: uses a YAML alias (line 2), which an untrusted kubeconfig may not; " +
            "write each entry out in full",
        );
        return true;
      },
    );
  }
  assert.deepEqual(calls, ["/secret ns/a"]);
  // Trusted text is never handed to the parser, and keeps its aliases.
  const trusted = await parseKubeconfigText("contexts: []\nx: &x [1]\ny: *x\n", { source: "/k/c.yaml", parser });
  assert.deepEqual(trusted.contexts, []);
  assert.deepEqual(calls, ["/secret ns/a"]);
});

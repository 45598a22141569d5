// Unit tests for one kubeconfig user's credentials as a ClusterAccess, built directly (no kubeconfig file).
import assert from "node:assert/strict";
import { join } from "node:path";
import { type AccessInit, KubeconfigAccess } from "./_kubeconfig_access.ts";
import { AuthError } from "../errors.ts";
import { withTempDir } from "../../../dev/support/local_client.ts";

const PEM_A = "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n";
const PEM_B = "-----BEGIN CERTIFICATE-----\nBBBB\n-----END CERTIFICATE-----\n";
const KEY = "-----BEGIN PRIVATE KEY-----\nKKKK\n-----END PRIVATE KEY-----\n";

function access(
  user: AccessInit["user"],
  cluster: Partial<AccessInit["cluster"]> = {},
  extra: Partial<AccessInit> = {},
) {
  const server = cluster.server ?? "https://127.0.0.1:6443";
  return new KubeconfigAccess({
    name: "prod",
    server,
    source: "/tmp/config",
    cluster: { name: "prod", server, skipTLSVerify: false, ...cluster },
    user,
    ...extra,
  });
}

Deno.test("KubeconfigAccess sends a bearer token and an impersonated user as headers", async () => {
  const a = access({ name: "u", token: "tok-1", impersonateUser: "alice" });
  assert.deepEqual((await a.auth()).headers, { Authorization: "Bearer tok-1", "Impersonate-User": "alice" });
});

Deno.test("KubeconfigAccess sends basic auth as a base64 Basic header", async () => {
  const a = access({ name: "u", username: "admin", password: "pä55" });
  const header = (await a.auth()).headers.Authorization;
  assert.match(header, /^Basic /);
  const bytes = Uint8Array.from(atob(header.slice("Basic ".length)), (c) => c.charCodeAt(0));
  assert.equal(new TextDecoder().decode(bytes), "admin:pä55");
});

Deno.test("KubeconfigAccess prefers an inline token to a tokenFile, and reads the tokenFile when there is none", () =>
  withTempDir(async (dir) => {
    const file = join(dir, "token");
    await Deno.writeTextFile(file, "from-file\n");
    assert.equal(
      (await access({ name: "u", token: "inline" }, {}, { tokenFile: file }).auth()).headers.Authorization,
      "Bearer inline",
    );
    assert.equal(
      (await access({ name: "u" }, {}, { tokenFile: file }).auth()).headers.Authorization,
      "Bearer from-file",
    );
  }));

Deno.test("KubeconfigAccess decodes inline CA, certificate and key data, and the file wins over data", () =>
  withTempDir(async (dir) => {
    const caFile = join(dir, "ca.crt");
    await Deno.writeTextFile(caFile, PEM_B);
    const inline = access(
      { name: "u", certData: btoa(PEM_A), keyData: btoa(KEY) },
      { caData: btoa(PEM_A) },
    );
    const auth = await inline.auth();
    assert.deepEqual(auth.caCerts, [PEM_A]);
    assert.equal(auth.cert, PEM_A);
    assert.equal(auth.key, KEY);
    const both = await access({ name: "u" }, { caData: btoa(PEM_A), caFile }).auth();
    assert.deepEqual(both.caCerts, [PEM_B]);
  }));

Deno.test("KubeconfigAccess re-reads certificate files on every auth(), so a rotated certificate is used at once", () =>
  withTempDir(async (dir) => {
    const certFile = join(dir, "client.crt");
    const keyFile = join(dir, "client.key");
    await Deno.writeTextFile(certFile, PEM_A);
    await Deno.writeTextFile(keyFile, KEY);
    const a = access({ name: "u", certFile, keyFile });
    assert.equal((await a.auth()).cert, PEM_A);
    await Deno.writeTextFile(certFile, PEM_B);
    assert.equal((await a.auth()).cert, PEM_B);
  }));

Deno.test("KubeconfigAccess fails with an AuthError naming the context and the unreadable file", () =>
  withTempDir(async (dir) => {
    const certFile = join(dir, "gone.crt");
    await assert.rejects(access({ name: "u", certFile }).auth(), (err: Error) => {
      assert.ok(err instanceof AuthError);
      assert.equal(err.message, `context "prod": cannot read ${certFile}: not found`);
      return true;
    });
  }));

Deno.test("KubeconfigAccess marks insecure-skip-tls-verify only for an https server", async () => {
  assert.equal((await access({ name: "u" }, { skipTLSVerify: true }).auth()).insecureSkipTlsVerify, true);
  assert.equal((await access({ name: "u" }).auth()).insecureSkipTlsVerify, false);
  const plain = access({ name: "u" }, { skipTLSVerify: true, server: "http://127.0.0.1:8080" });
  assert.equal((await plain.auth()).insecureSkipTlsVerify, false);
});

Deno.test("Concurrent auth() calls share one run; a later call starts a new one", () =>
  withTempDir(async (dir) => {
    const file = join(dir, "token");
    await Deno.writeTextFile(file, "t1");
    const a = access({ name: "u" }, {}, { tokenFile: file });
    const p1 = a.auth();
    const p2 = a.auth();
    assert.equal(p1, p2);
    await p1;
    const p3 = a.auth();
    assert.notEqual(p3, p1);
    await p3;
  }));

Deno.test("KubeconfigAccess reports an exec plugin that prints something other than ExecCredential JSON, without its output", () =>
  withTempDir(async (dir) => {
    const plugin = join(dir, "cred-plugin");
    await Deno.writeTextFile(plugin, "#!/bin/sh\necho 'not-json plugin-secret-output'\n");
    await Deno.chmod(plugin, 0o755);
    const a = access({
      name: "u",
      exec: { command: plugin, apiVersion: "client.authentication.k8s.io/v1", interactiveMode: "Never" },
    });
    await assert.rejects(a.auth(), (err: Error) => {
      assert.ok(err instanceof AuthError);
      assert.match(err.message, /^context "prod": exec credential plugin "cred-plugin" /);
      assert.doesNotMatch(err.message, /plugin-secret-output/);
      return true;
    });
  }));

// Tests for one kubeconfig entry turned into access: what is checked, what is refused, and how errors name the entry.
import assert from "node:assert/strict";
import { ConfigError } from "../errors.ts";
import { type Entry, toCluster, toUser } from "./_kubeconfig_entry.ts";

const entry = (name: string, value: Record<string, unknown>): Entry => ({ name, value, file: "/etc/hub/k.yaml" });

Deno.test("toCluster() keeps the server without user info or a trailing slash, and names entry, context and file when it refuses", () => {
  const c = toCluster("prod", entry("c", { cluster: { server: "https://admin:pw@10.0.0.1:6443/" } }));
  assert.equal(c.server, "https://10.0.0.1:6443");
  assert.equal(c.skipTLSVerify, false);
  assert.throws(
    () => toCluster("prod", entry("c", {})),
    /cluster "c" \(context "prod", \/etc\/hub\/k\.yaml\) has no "cluster" section/,
  );
  assert.throws(() => toCluster("prod", entry("c", { cluster: {} })), /has no server URL/);
  const bad = (() => {
    try {
      toCluster("prod", entry("c", { cluster: { server: "ftp://user:secret@x" } }));
    } catch (err) {
      return err as Error;
    }
  })();
  assert.ok(bad instanceof ConfigError);
  assert.match(bad.message, /invalid server URL/);
  assert.doesNotMatch(bad.message, /secret/, "a credential in the URL never reaches an error");
});

Deno.test("toCluster() refuses settings the hub cannot honour together, and drops tls-server-name where nothing is checked", () => {
  const server = "https://10.0.0.1:6443";
  const refused = [
    [{ server, "proxy-url": "ftp://p" }, /invalid proxy-url/],
    [{ server, "tls-server-name": "bad name!" }, /invalid tls-server-name/],
    [{ server, "tls-server-name": "kubernetes", "proxy-url": "http://p:3128" }, /both tls-server-name and proxy-url/],
    [{ server, "insecure-skip-tls-verify": true, "proxy-url": "http://p:3128" }, /insecure-skip-tls-verify and/],
  ] as const;
  for (const [cluster, message] of refused) {
    assert.throws(() => toCluster("prod", entry("c", { cluster })), message, JSON.stringify(cluster));
  }
  const named = toCluster("prod", entry("c", { cluster: { server, "tls-server-name": "kubernetes.default" } }));
  assert.equal(named.tlsServerName, "kubernetes.default");
  const insecure = { server, "tls-server-name": "kubernetes", "insecure-skip-tls-verify": true };
  assert.equal(toCluster("prod", entry("c", { cluster: insecure })).tlsServerName, undefined);
  assert.equal(toCluster("prod", entry("c", { cluster: { server: "http://10.0.0.1:8080" } })).skipTLSVerify, true);
});

Deno.test("toUser() reads token, tokenFile and certificates, refuses auth-provider and a half certificate pair", () => {
  assert.deepEqual(toUser("prod", "anon", undefined), { user: { name: "anon" } });
  assert.equal(toUser("prod", "u", entry("u", { user: { token: "t0" } })).user.token, "t0");
  const dir = Deno.makeTempDirSync();
  try {
    Deno.writeTextFileSync(`${dir}/tok`, "t1\n");
    const beside = (user: Record<string, unknown>): Entry => ({ name: "u", value: { user }, file: `${dir}/k.yaml` });
    assert.equal(toUser("prod", "u", beside({ tokenFile: "tok" })).tokenFile, `${dir}/tok`);
    assert.equal(toUser("prod", "u", beside({ "token-file": `${dir}/tok` })).tokenFile, `${dir}/tok`);
    assert.equal(toUser("prod", "u", beside({ token: "t0", tokenFile: "tok" })).tokenFile, undefined, "token wins");
    assert.throws(() => toUser("prod", "u", beside({ tokenFile: "absent" })), /cannot read tokenFile file .*absent/);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
  assert.throws(
    () => toUser("prod", "u", entry("u", { user: { "auth-provider": { name: "gcp" } } })),
    /user "u" \(context "prod", \/etc\/hub\/k\.yaml\).*auth-provider/,
  );
  assert.throws(
    () =>
      toUser(
        "prod",
        "u",
        entry("u", {
          user: { "client-certificate-data": btoa("-----BEGIN CERTIFICATE-----\nx\n-----END CERTIFICATE-----\n") },
        }),
      ),
    /client certificate without a key/,
  );
});

Deno.test("toUser() resolves an exec command beside the file; untrusted, the hub's PATH and HOME win and a bare name must be on that PATH", () => {
  const exec = { command: "./bin/plugin", env: [{ name: "PATH", value: "/evil" }, { name: "X", value: "1" }] };
  const trusted = toUser("prod", "u", entry("u", { user: { exec } }));
  assert.equal(trusted.user.exec?.command, "/etc/hub/bin/plugin");
  assert.equal(trusted.execEnv, undefined);
  const env = (trusted.user.exec?.env as { name: string }[]).map((e) => e.name);
  assert.deepEqual(env, ["PATH", "X", "KUBERNETES_EXEC_INFO"]);

  const dir = Deno.makeTempDirSync();
  try {
    Deno.writeTextFileSync(`${dir}/plugin`, "#!/bin/sh\n", { mode: 0o755 });
    const minimal = () => ({ PATH: dir, HOME: "/home/hub" });
    const bare = { command: "plugin", env: exec.env };
    const untrusted = toUser("prod", "u", entry("u", { user: { exec: bare } }), minimal);
    assert.equal(untrusted.user.exec?.command, `${dir}/plugin`);
    assert.equal(untrusted.execEnv?.PATH, dir);
    assert.equal(untrusted.execEnv?.HOME, "/home/hub");
    assert.equal(untrusted.execEnv?.X, "1");
    assert.throws(
      () => toUser("prod", "u", entry("u", { user: { exec: { command: "absent-plugin" } } }), minimal),
      /exec plugin "absent-plugin" is not an executable on the hub's PATH/,
    );
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

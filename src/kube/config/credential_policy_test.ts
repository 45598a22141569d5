// Unit tests for the untrusted-kubeconfig policy: which fields are refused, with which line, and that it never throws.
import assert from "node:assert/strict";
import {
  checkUntrustedKubeconfig,
  type CredentialPolicy,
  execAllowlistProblem,
  STRICT_CREDENTIAL_POLICY,
  untrustedContextProblems,
} from "./credential_policy.ts";

const STRICT = STRICT_CREDENTIAL_POLICY;

function doc(cluster: Record<string, unknown>, user: Record<string, unknown>) {
  return {
    clusters: [{ name: "c", cluster: { server: "https://10.0.0.1:6443", ...cluster } }],
    users: [{ name: "u", user }],
    contexts: [{ name: "x", context: { cluster: "c", user: "u" } }],
  };
}

Deno.test("checkUntrustedKubeconfig accepts inline credentials: token, CA, client certificate and key data, proxy", () => {
  const d = doc(
    { "certificate-authority-data": "QQ==", "tls-server-name": "api", "proxy-url": "http://p:3128" },
    { token: "t", "client-certificate-data": "QQ==", "client-key-data": "QQ==" },
  );
  assert.deepEqual(checkUntrustedKubeconfig(d, STRICT), []);
  assert.deepEqual(checkUntrustedKubeconfig(doc({ "insecure-skip-tls-verify": true }, { token: "t" }), STRICT), []);
});

Deno.test("checkUntrustedKubeconfig refuses tokenFile and every file path, naming the field but not the path", () => {
  const d = doc(
    { "certificate-authority": "/etc/ca.crt" },
    {
      tokenFile: "/var/run/secrets/kubernetes.io/serviceaccount/token",
      "token-file": "/t",
      "client-certificate": "/c",
      "client-key": "/k",
      "some-future-file": "/f",
    },
  );
  const problems = checkUntrustedKubeconfig(d, STRICT, "secret ns/x");
  assert.deepEqual(problems.map((p) => p.field).sort(), [
    "certificate-authority",
    "client-certificate",
    "client-key",
    "some-future-file",
    "token-file",
    "tokenFile",
  ]);
  for (const p of problems) {
    assert.equal(p.context, "x");
    assert.match(p.error, /^context "x" in secret ns\/x: .* names a file on the hub's own disk; .*inline only/);
    assert.doesNotMatch(p.error, /serviceaccount|\/etc\/ca/);
  }
});

Deno.test("checkUntrustedKubeconfig refuses plain http servers unless allowed", () => {
  const d = doc({ server: "http://admin:hunter2@127.0.0.1:9999" }, { token: "t" });
  const [p] = checkUntrustedKubeconfig(d, STRICT);
  assert.equal(p.field, "server");
  assert.match(p.error, /plain http.*--allow-http-servers/);
  assert.doesNotMatch(p.error, /hunter2/);
  assert.deepEqual(checkUntrustedKubeconfig(d, { ...STRICT, allowHttpServers: true }), []);
});

Deno.test("checkUntrustedKubeconfig refuses auth-provider, naming exec plugins as the way", () => {
  const d = doc({}, { "auth-provider": { name: "gcp", config: { "cmd-path": "sleep", "cmd-args": "3600" } } });
  const [p] = checkUntrustedKubeconfig(d, STRICT);
  assert.equal(p.field, "auth-provider");
  assert.match(p.error, /auth-provider "gcp".*removed .* in 1\.26.*exec credential plugin/);
});

Deno.test("checkUntrustedKubeconfig refuses exec unless its command is on the allowlist, exactly", () => {
  const exec = (command: unknown) => doc({}, { exec: { apiVersion: "client.authentication.k8s.io/v1", command } });
  const allow: CredentialPolicy = { execAllowlist: ["aws", "/opt/bin/kubelogin"], allowHttpServers: false };
  assert.match(
    checkUntrustedKubeconfig(exec("/bin/sh"), STRICT)[0].error,
    /"sh" is not on --exec-plugin-allowlist \(empty\)/,
  );
  assert.deepEqual(checkUntrustedKubeconfig(exec("aws"), allow), []);
  assert.deepEqual(checkUntrustedKubeconfig(exec("/opt/bin/kubelogin"), allow), []);
  assert.equal(checkUntrustedKubeconfig(exec("/usr/bin/aws"), allow)[0].field, "exec");
  assert.equal(checkUntrustedKubeconfig(exec("./aws"), allow)[0].field, "exec");
  assert.match(checkUntrustedKubeconfig(exec(undefined), allow)[0].error, /names no command/);
  assert.match(checkUntrustedKubeconfig(doc({}, { exec: "sh" }), allow)[0].error, /names no command/);
});

Deno.test("checkUntrustedKubeconfig refuses an allowed plugin whose exec.env sets PATH, LD_* or DYLD_*", () => {
  const allow: CredentialPolicy = { execAllowlist: ["aws"], allowHttpServers: false };
  const withEnv = (name: string) =>
    doc({}, {
      exec: { apiVersion: "client.authentication.k8s.io/v1", command: "aws", env: [{ name, value: "/evil" }] },
    });
  for (const name of ["PATH", "LD_PRELOAD", "LD_LIBRARY_PATH", "DYLD_INSERT_LIBRARIES"]) {
    const problems = checkUntrustedKubeconfig(withEnv(name), allow);
    assert.equal(problems.length, 1, name);
    assert.match(problems[0].error, new RegExp(`exec.env sets "${name}"`));
  }
  assert.deepEqual(checkUntrustedKubeconfig(withEnv("AWS_PROFILE"), allow), [], "other variables are the plugin's");
});

Deno.test("checkUntrustedKubeconfig judges the first definition of a name, as the loader uses it", () => {
  const d = {
    clusters: [{ name: "c", cluster: { server: "https://a" } }, { name: "c", cluster: { server: "http://b" } }],
    users: [{ name: "u", user: { token: "t" } }, { name: "u", user: { tokenFile: "/t" } }],
    contexts: [{ name: "x", context: { cluster: "c", user: "u" } }],
  };
  assert.deepEqual(checkUntrustedKubeconfig(d, STRICT), []);
  const bad = { ...d, users: [...d.users].reverse() };
  assert.deepEqual(checkUntrustedKubeconfig(bad, STRICT).map((p) => p.field), ["tokenFile"]);
});

Deno.test("checkUntrustedKubeconfig never throws, whatever shape it is given", () => {
  for (
    const d of [null, undefined, 3, "x", [], { contexts: 3 }, { contexts: [null, 1, { name: 2 }] }, {
      contexts: [{ name: "x", context: { cluster: ["c"], user: {} } }],
      clusters: "c",
      users: [null],
    }]
  ) {
    assert.deepEqual(checkUntrustedKubeconfig(d, STRICT), []);
  }
  assert.deepEqual(untrustedContextProblems("x", {}, STRICT), []);
  assert.deepEqual(untrustedContextProblems("x", { user: { tokenFile: "" } }, STRICT), []);
});

Deno.test("execAllowlistProblem refuses relative paths and accepts names and absolute paths", () => {
  assert.equal(execAllowlistProblem(["aws", "/usr/local/bin/kubelogin"]), undefined);
  assert.match(execAllowlistProblem(["aws", "bin/kubelogin"])!, /"bin\/kubelogin" is a relative path/);
});

import assert from "node:assert/strict";
import { VirtualClock } from "../../util/mod.ts";
import { AuthError } from "../errors.ts";
import { ExecCredentialAccess, type ExecPluginSpec, parseExecCredential, refreshAt } from "./exec_credential.ts";

const V1 = "client.authentication.k8s.io/v1";

/** Writes an executable /bin/sh script and answers its path. */
async function script(body: string): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "exec-cred-" });
  const path = `${dir}/plugin`;
  await Deno.writeTextFile(path, `#!/bin/sh\n${body}\n`);
  await Deno.chmod(path, 0o755);
  return path;
}

function access(
  plugin: Partial<ExecPluginSpec> & { command: string },
  clock = new VirtualClock(0),
  timeoutMs?: number,
) {
  return new ExecCredentialAccess({
    name: "ns/one",
    server: "https://127.0.0.1:1",
    source: "clusterprofile ns/one",
    caPem: "-----BEGIN CERTIFICATE-----\nx\n-----END CERTIFICATE-----\n",
    plugin: { args: [], env: {}, apiVersion: V1, ...plugin },
    clock,
    timeoutMs,
  });
}

Deno.test("refreshAt() replaces a credential a fifth of its lifetime before expiry, at least 2 s before, never before half-way, at most 5 min before", () => {
  assert.equal(refreshAt(0, 3_600_000), 3_600_000 - 300_000);
  assert.equal(refreshAt(0, 60_000), 48_000);
  assert.equal(refreshAt(0, 5_000), 3_000);
  assert.equal(refreshAt(0, 2_000), 1_000);
  assert.equal(refreshAt(10_000, 5_000), 5_000); // already expired: now
});

Deno.test("parseExecCredential() reads a token, a certificate pair and expirationTimestamp, and names each broken shape without its content", () => {
  const ok = parseExecCredential(
    JSON.stringify({
      kind: "ExecCredential",
      apiVersion: V1,
      status: { token: "t0k", expirationTimestamp: "2030-01-01T00:00:00Z" },
    }),
    V1,
  );
  assert.deepEqual(ok, {
    token: "t0k",
    cert: undefined,
    key: undefined,
    expiresAt: Date.parse("2030-01-01T00:00:00Z"),
  });
  const pair = parseExecCredential(
    JSON.stringify({
      kind: "ExecCredential",
      apiVersion: V1,
      status: { clientCertificateData: "C", clientKeyData: "K" },
    }),
    V1,
  );
  assert.deepEqual(pair, { token: undefined, cert: "C", key: "K", expiresAt: undefined });
  const secret = "secret-output-123";
  const cases: [string, RegExp][] = [
    [`not json ${secret}`, /not ExecCredential JSON/],
    [JSON.stringify({ kind: "Other", token: secret }), /not an ExecCredential/],
    [JSON.stringify({ kind: "ExecCredential", apiVersion: "x/v9" }), /answered apiVersion "x\/v9", not/],
    [JSON.stringify({ kind: "ExecCredential", apiVersion: V1 }), /without a status/],
    [JSON.stringify({ kind: "ExecCredential", apiVersion: V1, status: {} }), /neither a token nor/],
    [
      JSON.stringify({
        kind: "ExecCredential",
        apiVersion: V1,
        status: { token: secret, expirationTimestamp: "soon" },
      }),
      /expirationTimestamp that is not/,
    ],
    [
      JSON.stringify({ kind: "ExecCredential", apiVersion: V1, status: { token: "x", clientCertificateData: "C" } }),
      /without its key/,
    ],
  ];
  for (const [text, want] of cases) {
    const got = parseExecCredential(text, V1);
    assert.equal(typeof got, "string", text);
    assert.match(got as string, want);
    assert.ok(!(got as string).includes(secret));
  }
});

Deno.test("ExecCredentialAccess runs the plugin with exactly its environment and KUBERNETES_EXEC_INFO, and sends its token with the CA", async () => {
  // The plugin echoes what it saw as the token, so the test reads its environment back.
  const command = await script(
    `printf '{"kind":"ExecCredential","apiVersion":"${V1}","status":{"token":"%s|%s|%s"}}' ` +
      `"$FROM_FILE" "$HOME_LEAK" "$(printf %s "$KUBERNETES_EXEC_INFO" | tr -d '"{}:,' )"`,
  );
  Deno.env.set("HOME_LEAK", "the-hub-environment");
  try {
    const a = access({ command, env: { FROM_FILE: "yes" }, cluster: { server: "https://x", config: { c: 1 } } });
    const auth = await a.auth();
    const [fromFile, leak, info] = auth.headers.Authorization.slice("Bearer ".length).split("|");
    assert.equal(fromFile, "yes");
    assert.equal(leak, "", "nothing of the hub's environment reaches the plugin");
    assert.match(info, /interactivefalse/);
    assert.match(info, /serverhttps\/\/x/);
    assert.match(info, /configc1/);
    assert.deepEqual(auth.caCerts, ["-----BEGIN CERTIFICATE-----\nx\n-----END CERTIFICATE-----\n"]);
  } finally {
    Deno.env.delete("HOME_LEAK");
  }
});

Deno.test("ExecCredentialAccess keeps a token until refreshAt() of its expirationTimestamp, then runs the plugin again before it expires; concurrent calls share one run", async () => {
  const dir = await Deno.makeTempDir();
  // Each run prints a new token valid for 10 s of the virtual clock's time (which starts at 2030-01-01).
  const command = await script(
    `n=$(cat ${dir}/n 2>/dev/null || echo 0); n=$((n+1)); echo $n > ${dir}/n\n` +
      `printf '{"kind":"ExecCredential","apiVersion":"${V1}","status":{"token":"t%s","expirationTimestamp":"%s"}}' ` +
      `"$n" "$EXPIRY"`,
  );
  const start = Date.parse("2030-01-01T00:00:00Z");
  const clock = new VirtualClock(start);
  const a = access({ command, env: { EXPIRY: "2030-01-01T00:00:10Z" } }, clock);
  const [one, same] = await Promise.all([a.auth(), a.auth()]);
  assert.equal(one.headers.Authorization, "Bearer t1");
  assert.equal(same.headers.Authorization, "Bearer t1");
  assert.equal(a.runs, 1);
  await clock.advance(7_999);
  assert.equal((await a.auth()).headers.Authorization, "Bearer t1", "kept until 2 s before expiry");
  await clock.advance(1);
  assert.equal((await a.auth()).headers.Authorization, "Bearer t2", "replaced 2 s before it expires");
  a.invalidate();
  assert.equal((await a.auth()).headers.Authorization, "Bearer t3", "a 401 drops it at once");
});

Deno.test("ExecCredentialAccess kills a plugin that runs past its time limit, and reports a failing plugin without its output", async () => {
  const slow = access({ command: await script("sleep 30") }, undefined, 200);
  const t0 = Date.now();
  await assert.rejects(() => slow.auth(), (err: Error) => {
    assert.ok(err instanceof AuthError);
    assert.match(err.message, /exec credential plugin "plugin" did not finish within 0.2 s; it was stopped/);
    return true;
  });
  assert.ok(Date.now() - t0 < 10_000, "killed, not waited for");
  const failing = access({ command: await script("echo 'token-in-output-9'; exit 3") });
  await assert.rejects(() => failing.auth(), (err: Error) => {
    assert.match(err.message, /exited with code 3 \(its output is not shown/);
    assert.ok(!err.message.includes("token-in-output-9"));
    return true;
  });
  const missing = access({ command: "/nonexistent/plugin-x" });
  await assert.rejects(() => missing.auth(), /exec credential plugin "plugin-x" was not found/);
});

import assert from "node:assert/strict";
import { STRICT_CREDENTIAL_POLICY } from "../../../kube/mod.ts";
import {
  ADDITIONAL_ARGS_EXTENSION,
  ADDITIONAL_ENVS_EXTENSION,
  EXEC_EXTENSION,
  parseProviderFile,
  profileAccess,
  profileView,
  ProviderFileError,
} from "./cluster_profile_access.ts";

const V1 = "client.authentication.k8s.io/v1";
const CA = btoa("-----BEGIN CERTIFICATE-----\nx\n-----END CERTIFICATE-----\n");

/** A folder with `plug`, a plugin whose token tells its arguments and the variables KEEP and NEW it was given. */
async function pluginDir(): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "cp-access-" });
  await Deno.writeTextFile(
    `${dir}/plug`,
    `#!/bin/sh\nprintf '{"kind":"ExecCredential","apiVersion":"${V1}","status":{"token":"%s|%s|%s"}}' "$*" "$KEEP" "$NEW"\n`,
  );
  await Deno.chmod(`${dir}/plug`, 0o755);
  return dir;
}

function fileText(providers: unknown[]): string {
  return JSON.stringify({ providers });
}

Deno.test("parseProviderFile() reads KEP-5339's format, resolves the command (relative to the file, or on PATH) and names each broken field", async () => {
  const dir = await pluginDir();
  const file = `${dir}/providers.json`;
  const parsed = parseProviderFile(
    fileText([
      { name: "a", execConfig: { apiVersion: V1, command: "./plug", args: ["-x"], provideClusterInfo: true } },
      {
        name: "b",
        execConfig: { apiVersion: V1, command: "plug", env: [{ name: "K", value: "v" }] },
        profileSourcedCLIArgsPolicy: "Append",
        profileSourcedEnvVarsPolicy: "Replace",
      },
    ]),
    file,
    `/nonexistent:${dir}`,
  );
  assert.deepEqual(parsed.providers.map((p) => [p.name, p.command, p.provideClusterInfo, p.argsPolicy, p.envPolicy]), [
    ["a", `${dir}/plug`, true, "Ignore", "Ignore"],
    ["b", `${dir}/plug`, false, "Append", "Replace"],
  ]);
  const bad: [string, RegExp][] = [
    ["{", /is not valid JSON/],
    ["{}", /lists no providers/],
    [fileText([{ execConfig: {} }]), /providers\[0\] has no name/],
    [fileText([{ name: "a", execConfig: { command: "./plug" } }]), /apiVersion null is not one of/],
    [
      fileText([{ name: "a", execConfig: { apiVersion: V1, command: "nope-x" } }]),
      /"nope-x" is not an executable file on the hub's PATH/,
    ],
    [
      fileText([{ name: "a", execConfig: { apiVersion: V1, command: "./plug" }, profileSourcedCLIArgsPolicy: "All" }]),
      /must be Ignore or Append/,
    ],
    [
      fileText([
        { name: "a", execConfig: { apiVersion: V1, command: "./plug" } },
        { name: "a", execConfig: { apiVersion: V1, command: "./plug" } },
      ]),
      /providers\[1\] \("a"\): the name is listed twice/,
    ],
  ];
  for (const [text, want] of bad) {
    assert.throws(
      () => parseProviderFile(text, file, ""),
      (e: Error) => e instanceof ProviderFileError && want.test(e.message),
    );
  }
});

function profile(status: Record<string, unknown>) {
  return profileView({ metadata: { namespace: "fleet", name: "one" }, status });
}

Deno.test("profileAccess() takes the first provider of the file the profile lists, its server and CA from the profile, and the profile's args and env only as the policies allow", async () => {
  const dir = await pluginDir();
  const file = parseProviderFile(
    fileText([
      { name: "first", execConfig: { apiVersion: V1, command: "./plug" } },
      {
        name: "second",
        execConfig: {
          apiVersion: V1,
          command: "./plug",
          args: ["--a"],
          env: [{ name: "KEEP", value: "file" }],
          provideClusterInfo: true,
        },
        profileSourcedCLIArgsPolicy: "Append",
        profileSourcedEnvVarsPolicy: "AppendIfNotExists",
      },
    ]),
    `${dir}/p.json`,
  );
  const view = profile({
    conditions: [{ type: "ControlPlaneHealthy", status: "True", reason: "Ok" }],
    accessProviders: [
      { name: "other", cluster: { server: "https://other" } },
      {
        name: "second",
        cluster: {
          server: "https://10.0.0.1:6443",
          "certificate-authority-data": CA,
          extensions: [
            { name: EXEC_EXTENSION, extension: { clusterName: "spoke" } },
            { name: ADDITIONAL_ARGS_EXTENSION, extension: ["--b"] },
            { name: ADDITIONAL_ENVS_EXTENSION, extension: { KEEP: "profile", NEW: "n" } },
          ],
        },
      },
    ],
  });
  assert.deepEqual(view.condition, { type: "ControlPlaneHealthy", status: "True", reason: "Ok" });
  const got = await profileAccess(view, { file, policy: STRICT_CREDENTIAL_POLICY, baseEnv: { PATH: "/bin" } });
  assert.equal(got.error, undefined);
  assert.equal(got.access?.server, "https://10.0.0.1:6443");
  assert.equal(got.access?.name, "fleet/one");
  const token = (await got.access!.auth()).headers.Authorization;
  assert.equal(token, "Bearer --a --b|file|n", "args appended; the file's KEEP kept (AppendIfNotExists), NEW added");
  const again = await profileAccess(view, { file, policy: STRICT_CREDENTIAL_POLICY, baseEnv: { PATH: "/bin" } });
  assert.equal(again.credentialsDigest, got.credentialsDigest);
  assert.equal(again.endpointDigest, got.endpointDigest);
  const noEnv = await profileAccess(
    profile({
      accessProviders: [{
        name: "second",
        cluster: { server: "https://10.0.0.1:6443", "certificate-authority-data": CA },
      }],
    }),
    { file, policy: STRICT_CREDENTIAL_POLICY, baseEnv: { PATH: "/bin" } },
  );
  assert.equal(noEnv.endpointDigest, got.endpointDigest, "extensions reach the plugin, not the endpoint");
  assert.notEqual(noEnv.credentialsDigest, got.credentialsDigest);
});

Deno.test("profileAccess() refuses a profile naming no provider of the file, plain http, file paths, a bad CA and PATH from the profile, each in one line", async () => {
  const dir = await pluginDir();
  const file = parseProviderFile(
    fileText([{
      name: "p",
      execConfig: { apiVersion: V1, command: "./plug" },
      profileSourcedEnvVarsPolicy: "Replace",
    }]),
    `${dir}/p.json`,
  );
  const o = { file, policy: STRICT_CREDENTIAL_POLICY, baseEnv: {} };
  const cases: [Record<string, unknown>, RegExp][] = [
    [
      { accessProviders: [{ name: "rogue", cluster: { server: "https://x" } }] },
      /ClusterProfile fleet\/one names access provider\(s\) "rogue", none of which --clusterprofile-provider-file .* lists \(p\)/,
    ],
    [{ accessProviders: [{ name: "p", cluster: { server: "http://x" } }] }, /plain http.*--allow-http-servers/],
    [
      { accessProviders: [{ name: "p", cluster: { server: "https://x", "certificate-authority": "/etc/ca" } }] },
      /certificate-authority names a file on the hub's own disk/,
    ],
    [
      { accessProviders: [{ name: "p", cluster: { server: "https://x", "certificate-authority-data": "bm8=" } }] },
      /certificate-authority-data is not base64 of PEM/,
    ],
    [{
      accessProviders: [{
        name: "p",
        cluster: {
          server: "https://x",
          extensions: [{ name: ADDITIONAL_ENVS_EXTENSION, extension: { LD_PRELOAD: "/x" } }],
        },
      }],
    }, /sets "LD_PRELOAD", which a profile may not set/],
    [{ accessProviders: [{ name: "p", cluster: {} }] }, /has no https server URL/],
  ];
  for (const [status, want] of cases) {
    const got = await profileAccess(profile(status), o);
    assert.equal(got.access, undefined);
    assert.match(got.error!, want);
    assert.ok(!got.error!.includes("\n"));
  }
  const http = await profileAccess(profile(cases[1][0]), { ...o, policy: { ...o.policy, allowHttpServers: true } });
  assert.equal(http.error, undefined, "--allow-http-servers accepts it");
});

Deno.test("profileView() merges deprecated credentialProviders under accessProviders and reads ControlPlaneHealthy only", () => {
  const v = profile({
    credentialProviders: [{ name: "a", cluster: { server: "https://old" } }, {
      name: "b",
      cluster: { server: "https://b" },
    }],
    accessProviders: [{ name: "a", cluster: { server: "https://new" } }],
    conditions: [{ type: "Joined", status: "True" }, {
      type: "ControlPlaneHealthy",
      status: "False",
      message: "down\nnow",
    }],
  });
  assert.deepEqual(v.accessProviders, [{ name: "a", cluster: { server: "https://new" } }, {
    name: "b",
    cluster: { server: "https://b" },
  }]);
  assert.deepEqual(v.condition, { type: "ControlPlaneHealthy", status: "False", message: "down\\nnow" });
  assert.equal(profile({}).condition, undefined);
});

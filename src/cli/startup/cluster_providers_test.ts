import assert from "node:assert/strict";
import { clusterProfileProvider, homeClusterProviders } from "./cluster_providers.ts";
import { parseFlags } from "../flags/parse_flags.ts";
import { ClusterProfileProvider, ClusterRegistry, SecretProvider } from "../../hub/providers/mod.ts";
import { ConfigError, STRICT_CREDENTIAL_POLICY } from "../../kube/mod.ts";
import { silentLogger } from "../../util/mod.ts";

Deno.test("homeClusterProviders builds one provider per home-cluster flag given, and none without a home cluster", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(`${dir}/plug`, "#!/bin/sh\n");
    await Deno.chmod(`${dir}/plug`, 0o755);
    await Deno.writeTextFile(
      `${dir}/p.json`,
      JSON.stringify({
        providers: [{ name: "t", execConfig: { apiVersion: "client.authentication.k8s.io/v1", command: "./plug" } }],
      }),
    );
    const flags = parseFlags([
      "--clusters",
      "all",
      "--cluster-secrets",
      "s",
      "--cluster-profiles",
      "fleet",
      "--clusterprofile-provider-file",
      `${dir}/p.json`,
    ]);
    const o = {
      flags,
      registry: new ClusterRegistry({ selection: "all", logger: silentLogger() }),
      requestTimeoutMs: 1000,
      idleTimeoutMs: 1000,
      logger: silentLogger(),
    };
    assert.deepEqual(await homeClusterProviders({ ...o, home: undefined }), []);
    const home = { name: "home", server: "https://h", source: "t", auth: () => Promise.reject(new Error("unused")) };
    const built = await homeClusterProviders({ ...o, home });
    assert.equal(built.length, 2);
    assert.ok(built[0] instanceof SecretProvider);
    assert.ok(built[1] instanceof ClusterProfileProvider);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("clusterProfileProvider refuses an unreadable or invalid provider file with one line (exit 2)", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(`${dir}/bad.json`, `{"providers": []}`);
    const wiring = (providerFile: string) => ({
      flags: { namespaces: ["x"], providerFile },
      registry: new ClusterRegistry({ selection: "all", logger: silentLogger() }),
      home: { name: "home", server: "https://h", source: "t", auth: () => Promise.reject(new Error("unused")) },
      policy: STRICT_CREDENTIAL_POLICY,
      env: () => undefined,
      logger: silentLogger(),
    });
    await assert.rejects(() => clusterProfileProvider(wiring(`${dir}/missing.json`)), ConfigError, "cannot read");
    await assert.rejects(() => clusterProfileProvider(wiring(`${dir}/bad.json`)), /lists no providers/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

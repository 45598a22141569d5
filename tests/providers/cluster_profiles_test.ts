// End-to-end: SIG-Multicluster ClusterProfiles in the home cluster (prod) register prod, staging and dev with a real exec
// plugin (dev/build/exec_plugin, built like the apiservers) whose tokens expire after 5 s. One hub serves every case.

import assert from "node:assert/strict";
import { ensureExecPlugin } from "../../dev/build/build_exec_plugin.ts";
import { UUID_V4 } from "../../dev/support/cluster_api.ts";
import { installClusterProfileCrd } from "../../dev/support/cluster_profile_crd.ts";
import { HubProcess } from "../../dev/support/hub_process.ts";
import { localKubeClient } from "../../dev/support/local_client.ts";
import {
  kubeconfigText,
  kubectl,
  kubectlOk,
  localEndpoint,
  requireClusters,
  tempDir,
  testNamespace,
} from "../support/mod.ts";
import { metricSum, parseMetrics } from "../support/prometheus_text.ts";
import { mintRevocableToken, revokeToken } from "../support/revocable_token.ts";

/** Hang guard only (engaging takes well under 2 s here); timings are printed as `figure:` lines, never asserted. */
const HANG_GUARD_MS = 60_000;
const API = "/apis/multicluster.x-k8s.io/v1alpha1";
const PROVIDER = "hub-e2e-token";
const TOKEN_LIFETIME = "5s";

function profileBody(ns: string, name: string) {
  return {
    apiVersion: "multicluster.x-k8s.io/v1alpha1",
    kind: "ClusterProfile",
    metadata: { name, namespace: ns },
    spec: { clusterManager: { name: "hub-e2e" } },
  };
}

/** The status a cluster manager (OCM, GKE Fleet) would write: an access provider for `context`, and the condition. */
function profileStatus(context: string, provider: string, healthy: "True" | "False") {
  const c = localEndpoint(context);
  return {
    accessProviders: [{
      name: provider,
      cluster: {
        server: c.server,
        "certificate-authority-data": btoa(c.caPem),
        extensions: [{ name: "client.authentication.k8s.io/exec", extension: { clusterName: context } }],
      },
    }],
    conditions: [{
      type: "ControlPlaneHealthy",
      status: healthy,
      reason: healthy === "True" ? "Healthy" : "Unreachable",
      message: healthy === "True" ? "ok" : "the control plane does not answer",
      lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, "Z"),
    }],
  };
}

async function seriesFor(hub: HubProcess, cluster: string): Promise<string[]> {
  return (await hub.get("/metrics")).text.split("\n").filter((l) => l.includes(`cluster="${cluster}"`));
}

async function waitUuid(context: string, namespace: string, name: string): Promise<void> {
  const deadline = Date.now() + HANG_GUARD_MS;
  while (Date.now() < deadline) {
    const r = await kubectl(context, ["get", "uuid", name, "-n", namespace, "-o", "jsonpath={.status.uuid}"]);
    if (UUID_V4.test(r.stdout.trim())) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`Uuid ${context}/${namespace}/${name} got no UUID within the hang guard`);
}

Deno.test("ClusterProfiles in the home cluster engage prod, staging and dev through the provider file's exec plugin, follow ControlPlaneHealthy, refresh expiring tokens with no 401, refuse an unlisted plugin, and disengage a deleted profile leak-free", async () => {
  requireClusters();
  const plugin = await ensureExecPlugin();
  await installClusterProfileCrd("prod");
  await using ns = await testNamespace("cluster-profiles", { contexts: ["prod", "dev"] });
  await using dir = await tempDir("cluster-profiles");
  const admin = await localKubeClient("prod");
  const crb = `${ns.name}-profile-token`;
  try {
    // dev's token is a TokenRequest token bound to a Secret: revoking it makes the apiserver refuse it, so a hub that
    // kept it past its expirationTimestamp would get 401s.
    await kubectlOk("dev", ["create", "serviceaccount", "profile", "-n", ns.name]);
    await kubectlOk("dev", [
      "create",
      "clusterrolebinding",
      crb,
      "--clusterrole=cluster-admin",
      `--serviceaccount=${ns.name}:profile`,
    ]);
    const firstDevToken = await mintRevocableToken("dev", ns.name, "profile");
    await Deno.mkdir(`${dir.path}/tokens`);
    await dir.write("tokens/prod", localEndpoint("prod").token);
    await dir.write("tokens/staging", localEndpoint("staging").token);
    await dir.write("tokens/dev", firstDevToken.token);
    const pluginLog = `${dir.path}/plugin.log`;
    const providerFile = await dir.write(
      "providers.json",
      JSON.stringify({
        providers: [{
          name: PROVIDER,
          execConfig: {
            apiVersion: "client.authentication.k8s.io/v1",
            command: plugin,
            args: ["--token-dir", `${dir.path}/tokens`, "--expires-in", TOKEN_LIFETIME, "--log", pluginLog],
            provideClusterInfo: true,
          },
        }],
      }),
    );
    const p = localEndpoint("prod");
    const hubConfig = await dir.write(
      "hub.yaml",
      kubeconfigText([{ name: "prod", server: p.server, caPem: p.caPem, user: { token: p.token } }]),
    );
    await Deno.mkdir(`${dir.path}/empty`);
    const hub = HubProcess.start({
      clusters: ["all"],
      kubeconfigs: [hubConfig],
      args: [
        "--cluster-profiles",
        ns.name,
        "--clusterprofile-provider-file",
        providerFile,
        "--cluster-dir",
        `${dir.path}/empty`,
        "--namespace",
        ns.name,
        "--operators",
        "uuid",
      ],
    });
    const profiles = `${API}/namespaces/${ns.name}/clusterprofiles`;
    const setStatus = async (name: string, status: unknown) => {
      const obj = await admin.request("GET", `${profiles}/${name}`) as Record<string, unknown>;
      await admin.request("PUT", `${profiles}/${name}/status`, { body: { ...obj, status } });
    };
    try {
      const ready = await hub.waitStatus((s) => s.ready === true, HANG_GUARD_MS, "readiness");
      assert.deepEqual(ready.providers["cluster-profile"].watches, [`prod:${ns.name}`]);

      // Three profiles, registered one after the other; each one's time from its status write to `watching`.
      const names = ["prod", "staging", "dev"];
      const written = new Map<string, number>();
      for (const context of names) {
        await admin.request("POST", profiles, { body: profileBody(ns.name, `p-${context}`) });
        await setStatus(`p-${context}`, profileStatus(context, PROVIDER, "True"));
        written.set(context, performance.now());
      }
      const engagedAt = new Map<string, number>();
      const deadline = performance.now() + HANG_GUARD_MS;
      while (engagedAt.size < names.length && performance.now() < deadline) {
        const s = (await hub.get("/status")).body;
        for (const c of names) {
          if (!engagedAt.has(c) && s?.clusters?.[`${ns.name}/p-${c}`]?.state === "watching") {
            engagedAt.set(c, performance.now());
          }
        }
        await new Promise((r) => setTimeout(r, 50));
      }
      for (const c of names) {
        assert.ok(engagedAt.has(c), `${ns.name}/p-${c} watching within the hang guard: ${hub.tail()}`);
        console.log(
          `figure: ClusterProfile p-${c} status written -> watching: ${
            ((engagedAt.get(c)! - written.get(c)!) / 1000).toFixed(2)
          } s`,
        );
      }
      const engaged = (await hub.get("/status")).body.clusters[`${ns.name}/p-prod`];
      assert.equal(engaged.provider, "cluster-profile");
      assert.deepEqual(engaged.condition, {
        type: "ControlPlaneHealthy",
        status: "True",
        reason: "Healthy",
        message: "ok",
      });

      // A profile naming a plugin the provider file does not list: refused with one line, nothing run.
      await admin.request("POST", profiles, { body: profileBody(ns.name, "rogue") });
      await setStatus("rogue", profileStatus("staging", "someone-elses-plugin", "True"));
      const rogue = `${ns.name}/rogue`;
      const refused = await hub.waitStatus(
        (s) => /someone-elses-plugin/.test(s.clusters[rogue]?.lastError ?? ""),
        HANG_GUARD_MS,
        "the rogue profile refused",
      );
      const line = refused.clusters[rogue].lastError as string;
      assert.match(
        line,
        new RegExp(
          `^ClusterProfile ${ns.name}/rogue names access provider\\(s\\) "someone-elses-plugin", none of which ` +
            `--clusterprofile-provider-file .* lists \\(${PROVIDER}\\); the hub runs only the plugins that file names$`,
        ),
      );
      assert.equal(refused.clusters[rogue].state, "registering");
      assert.deepEqual(
        refused.providers["cluster-profile"].errors.filter((e: { cluster?: string }) => e.cluster === rogue),
        [{ source: `${ns.name}/rogue`, cluster: rogue, error: line }],
      );
      assert.ok(hub.logs.some((l) => l.includes("cluster not usable") && l.includes("someone-elses-plugin")));

      // ControlPlaneHealthy False disengages staging (shown with its condition); True engages it again.
      const staging = `${ns.name}/p-staging`;
      await setStatus("p-staging", profileStatus("staging", PROVIDER, "False"));
      const down = await hub.waitStatus(
        (s) => s.clusters[staging]?.state === "registering",
        HANG_GUARD_MS,
        "staging held",
      );
      assert.equal(down.clusters[staging].condition.status, "False");
      assert.match(
        down.clusters[staging].lastError,
        /ControlPlaneHealthy condition is False \(Unreachable: the control/,
      );
      await setStatus("p-staging", profileStatus("staging", PROVIDER, "True"));
      const up = await hub.waitStatus((s) => s.clusters[staging]?.state === "watching", HANG_GUARD_MS, "staging again");
      assert.equal(up.clusters[staging].condition.status, "True");

      // Expiring tokens: dev's next token is in place, the first expires (per the plugin) and is then revoked; the
      // hub's next writes to dev must carry the new one, with no 401 on the way.
      const secondDevToken = await mintRevocableToken("dev", ns.name, "profile");
      await dir.write("tokens/dev", secondDevToken.token);
      const runs = () =>
        Deno.readTextFileSync(pluginLog).trim().split("\n").map((l) => JSON.parse(l) as Record<string, string>)
          .filter((r) => r.cluster === "dev");
      const firstExpiry = Date.parse(runs()[0].expires);
      await new Promise((r) => setTimeout(r, Math.max(0, firstExpiry - Date.now() + 100)));
      const d = localEndpoint("dev");
      await revokeToken("dev", ns.name, firstDevToken, { url: d.server, caPem: d.caPem }, HANG_GUARD_MS);
      for (const name of ["after-expiry-1", "after-expiry-2"]) {
        await kubectlOk("dev", ["apply", "-f", "-"], {
          stdin: `apiVersion: demo.operator/v1\nkind: Uuid\nmetadata:\n  name: ${name}\n  namespace: ${ns.name}\n`,
        });
        await waitUuid("dev", ns.name, name);
      }
      const devRuns = runs();
      console.log(`figure: exec plugin runs for dev in this test: ${devRuns.length}`);
      assert.ok(devRuns.length >= 2, `the plugin ran again after the first token's expiry: ${JSON.stringify(devRuns)}`);
      const metrics = parseMetrics((await hub.get("/metrics")).text);
      for (const c of names) {
        assert.equal(
          metricSum(metrics, "rest_client_requests_total", { cluster: `${ns.name}/p-${c}`, code: "401" }),
          0,
        );
      }
      assert.ok(
        metricSum(metrics, "rest_client_requests_total", { cluster: `${ns.name}/p-dev` }) > 0,
        "dev's requests are counted (so zero 401s means something)",
      );
      assert.ok(!hub.logs.some((l) => l.includes(" 401") || l.includes('"status":401')), "no 401 in the logs");

      // A deleted profile disengages leak-free: its /status entry and every series go.
      const prod = `${ns.name}/p-prod`;
      assert.ok((await seriesFor(hub, prod)).length > 1, "prod has series while registered");
      await admin.request("DELETE", `${profiles}/p-prod`);
      await hub.waitStatus((s) => !(prod in s.clusters), HANG_GUARD_MS, `${prod} gone`);
      assert.deepEqual(await seriesFor(hub, prod), []);
      for (const token of [localEndpoint("prod").token, firstDevToken.token, secondDevToken.token]) {
        assert.ok(!hub.logs.some((l) => l.includes(token)), "no token in the logs");
        assert.ok(!(await hub.get("/status")).text.includes(token), "no token in /status");
      }
    } finally {
      await hub.stop();
    }
  } finally {
    admin.close();
    await kubectl("dev", ["delete", "clusterrolebinding", crb, "--ignore-not-found"]);
  }
});

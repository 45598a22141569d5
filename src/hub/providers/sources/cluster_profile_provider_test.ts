// Tests of the ClusterProfile provider against the real local apiserver (context prod, the home cluster), watching a
// namespace of the test's own, with a registry of our own that records what it is told.

import assert from "node:assert/strict";
import { waitFor } from "../../../../dev/support/cluster_api.ts";
import { installClusterProfileCrd } from "../../../../dev/support/cluster_profile_crd.ts";
import { KUBECONFIG_PATH } from "../../../../dev/clusters/clusters.ts";
import { inLocalNamespace } from "../../../../dev/support/local_client.ts";
import { type KubeClient, loadContexts, STRICT_CREDENTIAL_POLICY } from "../../../kube/mod.ts";
import { silentLogger } from "../../../util/mod.ts";
import { parseProviderFile } from "./cluster_profile_access.ts";
import { ClusterProfileProvider } from "./cluster_profile_provider.ts";
import type { ClusterOffer, ProviderWatch } from "../cluster_offer.ts";
import type { ClusterRegistry } from "../registry.ts";

/** Hang guard: a list and a watch on a local apiserver; 30 s is far above any run seen. */
const HANG_GUARD_MS = 30_000;
const API = "/apis/multicluster.x-k8s.io/v1alpha1";

class RecordingRegistry {
  readonly calls: string[] = [];
  readonly offers = new Map<string, ClusterOffer>();
  watch: (() => ProviderWatch) | undefined;
  attach(_provider: string, watch: () => ProviderWatch): void {
    this.watch = watch;
  }
  offer(_provider: string, source: string, offers: ClusterOffer[]): void {
    this.calls.push(`offer ${source}`);
    this.offers.set(source, offers[0]);
  }
  withdraw(_provider: string, source: string): void {
    this.calls.push(`withdraw ${source}`);
    this.offers.delete(source);
  }
  unusable(): void {}
}

function providing(fn: (client: KubeClient, ns: string, registry: RecordingRegistry) => Promise<void>) {
  return inLocalNamespace("prod", "cp-provider", async (client, ns) => {
    await installClusterProfileCrd("prod");
    const [home] = (await loadContexts({ files: [KUBECONFIG_PATH] })).select(["prod"]);
    const dir = await Deno.makeTempDir({ prefix: "cp-provider-" });
    await Deno.writeTextFile(`${dir}/plug`, "#!/bin/sh\nexit 1\n");
    await Deno.chmod(`${dir}/plug`, 0o755);
    const file = parseProviderFile(
      JSON.stringify({
        providers: [{
          name: "token",
          execConfig: { apiVersion: "client.authentication.k8s.io/v1", command: "./plug" },
        }],
      }),
      `${dir}/providers.json`,
    );
    const registry = new RecordingRegistry();
    const p = new ClusterProfileProvider({
      registry: registry as unknown as ClusterRegistry,
      home,
      namespaces: [ns],
      file,
      policy: STRICT_CREDENTIAL_POLICY,
      baseEnv: {},
      logger: silentLogger(),
    });
    const ac = new AbortController();
    const running = p.start(ac.signal);
    try {
      await fn(client, ns, registry);
      assert.equal(registry.watch?.().state, "watching");
      assert.deepEqual(registry.watch?.().watches, [`prod:${ns}`]);
    } finally {
      ac.abort();
      await running;
      await Deno.remove(dir, { recursive: true });
    }
  });
}

async function putProfile(client: KubeClient, ns: string, name: string, provider: string, healthy?: string) {
  const path = `${API}/namespaces/${ns}/clusterprofiles`;
  let obj = await client.request("GET", `${path}/${name}`).then((r) => r as Record<string, unknown>).catch(() =>
    undefined
  );
  if (!obj) {
    obj = await client.request("POST", path, {
      body: {
        apiVersion: "multicluster.x-k8s.io/v1alpha1",
        kind: "ClusterProfile",
        metadata: { name, namespace: ns },
        spec: { clusterManager: { name: "test" } },
      },
    }) as Record<string, unknown>;
  }
  const now = new Date().toISOString().replace(/\.\d+Z$/, "Z");
  obj.status = {
    accessProviders: [{ name: provider, cluster: { server: "https://10.255.0.1:6443" } }],
    conditions: healthy === undefined ? [] : [{
      type: "ControlPlaneHealthy",
      status: healthy,
      reason: healthy === "True" ? "Healthy" : "Unreachable",
      message: "m",
      lastTransitionTime: now,
    }],
  };
  await client.request("PUT", `${path}/${name}/status`, { body: obj });
}

Deno.test("ClusterProfileProvider offers <namespace>/<name> usable only while ControlPlaneHealthy is True, with the condition, and withdraws a deleted profile", () =>
  providing(async (client, ns, registry) => {
    await putProfile(client, ns, "edge", "token", "True");
    const key = `${ns}/edge`;
    const ok = await waitFor(
      () => registry.offers.get(key)?.access && registry.offers.get(key),
      "usable",
      HANG_GUARD_MS,
    );
    assert.equal(ok.name, `${ns}/edge`);
    assert.equal(ok.access?.server, "https://10.255.0.1:6443");
    assert.deepEqual(ok.condition, { type: "ControlPlaneHealthy", status: "True", reason: "Healthy", message: "m" });
    await putProfile(client, ns, "edge", "token", "False");
    const down = await waitFor(
      () => !registry.offers.get(key)?.access && registry.offers.get(key),
      "not usable",
      HANG_GUARD_MS,
    );
    assert.match(down.error!, /ControlPlaneHealthy condition is False \(Unreachable: m\); the hub engages it once/);
    assert.equal(down.condition?.status, "False");
    assert.equal(down.endpointDigest, ok.endpointDigest);
    await putProfile(client, ns, "edge", "token");
    const missing = await waitFor(
      () => /is missing/.test(registry.offers.get(key)?.error ?? "") && registry.offers.get(key),
      "missing condition",
      HANG_GUARD_MS,
    );
    assert.equal(missing.access, undefined);
    await client.request("DELETE", `${API}/namespaces/${ns}/clusterprofiles/edge`);
    await waitFor(() => registry.calls.includes(`withdraw ${key}`), "withdrawn", HANG_GUARD_MS);
    assert.equal(registry.offers.size, 0);
  }));

Deno.test("ClusterProfileProvider refuses a profile whose access provider the file does not list, naming both", () =>
  providing(async (client, ns, registry) => {
    await putProfile(client, ns, "rogue", "someone-elses-plugin", "True");
    // Created without a status first (it names no provider then); the status names the rogue one.
    const o = await waitFor(
      () => /someone-elses/.test(registry.offers.get(`${ns}/rogue`)?.error ?? "") && registry.offers.get(`${ns}/rogue`),
      "the refusal",
      HANG_GUARD_MS,
    );
    assert.equal(o.access, undefined);
    assert.match(
      o.error!,
      /names access provider\(s\) "someone-elses-plugin", none of which --clusterprofile-provider-file .* lists \(token\)/,
    );
  }));

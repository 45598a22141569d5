// End to end against the real apiservers: a kubeconfig Secret rewritten many times a second is re-engaged at most once
// per interval, and the version the apiserver holds last is the one served.

import assert from "node:assert/strict";
import { HubProcess } from "../../dev/support/hub_process.ts";
import { localKubeClient } from "../../dev/support/local_client.ts";
import { kubeconfigText, localEndpoint, requireClusters, tempDir, testNamespace } from "../../dev/support/mod.ts";

const HANG_GUARD_MS = 60_000;
/** How long the Secret is rewritten, and how often. */
const CHURN_MS = 6_000;
const WRITES_PER_S = 40;

Deno.test("A kubeconfig Secret rewritten 40 times a second for 6 s is re-engaged at most once per 3 s, logged in a few lines, and its last version is the one served", async () => {
  requireClusters();
  await using ns = await testNamespace("secret-churn", { contexts: ["prod"] });
  await using dir = await tempDir("secret-churn");
  const prod = localEndpoint("prod");
  const staging = localEndpoint("staging");
  const hubConfig = await dir.write(
    "hub.yaml",
    kubeconfigText([{ name: "prod", server: prod.server, caPem: prod.caPem, user: { token: prod.token } }]),
  );
  await Deno.mkdir(`${dir.path}/empty`);
  const name = `churned-${crypto.randomUUID().slice(0, 6)}`;
  // Version i reaches staging scoped to namespace `churn-i` (the context's opt-in): each write changes the endpoint.
  const secret = (i: number) => ({
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name, namespace: ns.name, labels: { "sigs.k8s.io/multicluster-runtime-kubeconfig": "true" } },
    data: {
      kubeconfig: btoa(JSON.stringify({
        apiVersion: "v1",
        kind: "Config",
        clusters: [{
          name: "s",
          cluster: { server: staging.server, "certificate-authority-data": btoa(staging.caPem) },
        }],
        users: [{ name: "u", user: { token: staging.token } }],
        contexts: [{
          name: "c",
          context: {
            cluster: "s",
            user: "u",
            namespace: `churn-${i}`,
            extensions: [{ name: "operator-hub", extension: { scope: "namespace" } }],
          },
        }],
        "current-context": "c",
      })),
    },
  });
  const hub = HubProcess.start({
    clusters: ["all"],
    kubeconfigs: [hubConfig],
    args: ["--cluster-secrets", ns.name, "--cluster-dir", `${dir.path}/empty`, "--operators", "uuid"],
  });
  const admin = await localKubeClient("prod");
  try {
    await hub.waitReady(HANG_GUARD_MS);
    await admin.request("POST", `/api/v1/namespaces/${ns.name}/secrets`, { body: secret(0) });
    await hub.waitStatus((s) => s.clusters?.[name]?.namespace === "churn-0", HANG_GUARD_MS, "version 0 served");
    const mark = hub.logs.length;
    const t0 = performance.now();
    let sent = 0;
    const inFlight = new Set<Promise<unknown>>();
    while (performance.now() - t0 < CHURN_MS) {
      const due = Math.floor(((performance.now() - t0) / 1000) * WRITES_PER_S);
      while (sent < due && inFlight.size < 4) {
        const p = admin.request("PUT", `/api/v1/namespaces/${ns.name}/secrets/${name}`, { body: secret(++sent) })
          .finally(() => inFlight.delete(p));
        inFlight.add(p);
      }
      await new Promise((r) => setTimeout(r, 5));
    }
    await Promise.all(inFlight);
    const elapsed = (performance.now() - t0) / 1000;
    // Whatever landed last at the apiserver (writes in flight may land in any order) is what must be served.
    const held = await admin.request("GET", `/api/v1/namespaces/${ns.name}/secrets/${name}`) as {
      data: { kubeconfig: string };
    };
    const last = JSON.parse(atob(held.data.kubeconfig)).contexts[0].context.namespace;
    await hub.waitStatus(
      (s) => s.clusters?.[name]?.namespace === last,
      HANG_GUARD_MS,
      `the last version (${last}) served`,
    );
    const lines = hub.logs.slice(mark).map((l) => {
      try {
        return JSON.parse(l) as Record<string, unknown>;
      } catch {
        return {};
      }
    });
    const engaged = lines.filter((l) => l.msg === "cluster engaged" && l.cluster === name).length;
    const registry = lines.filter((l) => l.cluster === name && /^cluster (re-)?registered/.test(String(l.msg)));
    assert.ok(sent >= 20, `the test rewrote the Secret often enough: ${sent} writes`);
    // One engage per 3 s interval over the churn and the wait after it, plus the one that ends it.
    const bound = Math.ceil((elapsed + 3) / 3) + 1;
    assert.ok(engaged >= 1 && engaged <= bound, `${engaged} engages for ${sent} writes in ${elapsed} s (≤ ${bound})`);
    assert.ok(registry.length <= bound, `registry lines: ${registry.length}`);
    assert.ok(
      registry.some((l) => typeof l.changesCoalesced === "number" && l.changesCoalesced > 1),
      "an engage says how many changes it stands for",
    );
  } finally {
    admin.close();
    await hub.stop();
  }
});

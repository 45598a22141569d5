// Names the command line defines (`in-cluster`, every context of a --kubeconfig file) cannot be taken by a labelled
// Secret or a file dropped into --cluster-dir; and a server URL's user info reaches no log, /status or /metrics.

import assert from "node:assert/strict";
import { UUID_V4 } from "../../dev/support/cluster_api.ts";
import { HubProcess } from "../../dev/support/hub_process.ts";
import {
  kubeconfigText,
  kubectl,
  kubectlOk,
  localEndpoint,
  randomToken,
  requireClusters,
  tempDir,
  testNamespace,
} from "../support/mod.ts";
import { metricSeries, parseMetrics } from "../support/prometheus_text.ts";

/** Hang guard: a Secret is judged and a Uuid reconciled in well under 2 s here; 60 s is far beyond 5× that. */
const HANG_GUARD_MS = 60_000;

const LABEL = "sigs.k8s.io/multicluster-runtime-kubeconfig";

function kubeconfigFor(context: string, name: string, server?: string): string {
  const c = localEndpoint(context);
  return kubeconfigText([{ name, server: server ?? c.server, caPem: c.caPem, user: { token: c.token } }]);
}

function secretManifest(namespace: string, name: string, kubeconfig?: string): string {
  return JSON.stringify({
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name, namespace, labels: { [LABEL]: "true" } },
    ...(kubeconfig === undefined ? {} : { data: { kubeconfig: btoa(kubeconfig) } }),
  });
}

async function uuidOf(context: string, namespace: string, name: string): Promise<string> {
  const deadline = Date.now() + HANG_GUARD_MS;
  while (Date.now() < deadline) {
    const r = await kubectl(context, ["get", "uuid", name, "-n", namespace, "-o", "jsonpath={.status.uuid}"]);
    if (UUID_V4.test(r.stdout.trim())) return r.stdout.trim();
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`Uuid ${context}/${namespace}/${name} got no UUID within the hang guard`);
}

Deno.test("A labelled Secret or a dropped file named after a --kubeconfig context (prod) or in-cluster takes nothing: prod keeps serving Uuids, and the collisions show in /status and hub_cluster_name_collisions", async () => {
  requireClusters();
  await using ns = await testNamespace("reserved-names", { contexts: ["prod", "dev"] });
  await using dir = await tempDir("reserved-names");
  const clusterDir = `${dir.path}/clusters`;
  await Deno.mkdir(clusterDir);
  const hubConfig = await dir.write("hub.yaml", kubeconfigFor("prod", "prod"));
  const hub = HubProcess.start({
    clusters: ["all"],
    kubeconfigs: [hubConfig],
    args: ["--cluster-secrets", ns.name, "--cluster-dir", clusterDir, "--namespace", ns.name],
  });
  try {
    await hub.waitReady(HANG_GUARD_MS);
    const engagedBefore = (await hub.get("/status")).body.clusters.prod.registeredAt;
    // A working kubeconfig for dev under the name prod, one named in-cluster without any kubeconfig, and a file.
    await kubectlOk("prod", ["apply", "-f", "-"], {
      stdin: secretManifest(ns.name, "prod", kubeconfigFor("dev", "x")),
    });
    await kubectlOk("prod", ["apply", "-f", "-"], { stdin: secretManifest(ns.name, "in-cluster") });
    await dir.write("clusters/takeover.yaml", kubeconfigFor("dev", "prod"));
    const shown = await hub.waitStatus(
      (s) => s.providers.secret.errors.length === 2 && s.providers.folder.errors.length === 1,
      HANG_GUARD_MS,
      "the three collisions shown",
    );
    assert.deepEqual(
      shown.providers.secret.errors.map((e: { source: string; cluster: string }) => [e.source, e.cluster]),
      [[`${ns.name}/in-cluster`, "in-cluster"], [`${ns.name}/prod`, "prod"]],
    );
    assert.match(
      shown.providers.secret.errors[1].error,
      new RegExp(`cluster name "prod" is reserved: the command line defines it \\(folder ${hubConfig}\\); secret`),
    );
    assert.match(shown.providers.secret.errors[0].error, /"in-cluster" names the hub's own pod cluster/);
    assert.match(shown.providers.folder.errors[0].error, /cluster name "prod" is reserved/);
    assert.equal(shown.clusters.prod.state, "watching");
    assert.equal(shown.clusters.prod.lastError, null);
    assert.equal(shown.clusters.prod.provider, "folder");
    assert.equal(shown.clusters.prod.registeredAt, engagedBefore, "prod was never re-engaged");
    assert.equal("in-cluster" in shown.clusters, false);
    const metrics = parseMetrics((await hub.get("/metrics")).text);
    assert.equal(metricSeries(metrics, "hub_cluster_name_collisions", { reason: "reserved" }), 2);
    assert.equal(metricSeries(metrics, "hub_cluster_name_collisions", { reason: "duplicate" }), 0);
    assert.ok(
      hub.logs.some((l) => l.includes("cluster name reserved; source ignored") && l.includes(`${ns.name}/prod`)),
      "one log line for the Secret",
    );

    // The real prod serves: a Uuid created now, after the takeover attempts, gets its UUID in prod.
    await kubectlOk("prod", ["apply", "-f", "-"], {
      stdin: `apiVersion: demo.operator/v1\nkind: Uuid\nmetadata:\n  name: after-takeover\n  namespace: ${ns.name}\n`,
    });
    await uuidOf("prod", ns.name, "after-takeover");
    // And nothing was reconciled in dev in that namespace under prod's name.
    await kubectlOk("dev", ["apply", "-f", "-"], {
      stdin: `apiVersion: demo.operator/v1\nkind: Uuid\nmetadata:\n  name: not-served\n  namespace: ${ns.name}\n`,
    });
    const status = (await hub.get("/status")).body;
    assert.deepEqual(Object.keys(status.clusters).sort(), ["prod"]);

    await kubectlOk("prod", ["delete", "secret", "prod", "in-cluster", "-n", ns.name]);
    await Deno.remove(`${clusterDir}/takeover.yaml`);
    const cleared = await hub.waitStatus(
      (s) => s.providers.secret.errors.length === 0 && s.providers.folder.errors.length === 0,
      HANG_GUARD_MS,
      "the collisions gone",
    );
    assert.equal(cleared.clusters.prod.registeredAt, engagedBefore);
    const after = parseMetrics((await hub.get("/metrics")).text);
    assert.equal(metricSeries(after, "hub_cluster_name_collisions", { reason: "reserved" }), 0);
  } finally {
    await hub.stop();
  }
});

Deno.test("A server URL with user info (https://user:pass@host) is served, and the password is in no log line, /status or /metrics, from a --kubeconfig file or a Secret", async () => {
  requireClusters();
  await using ns = await testNamespace("url-userinfo", { contexts: ["prod", "dev"] });
  await using dir = await tempDir("url-userinfo");
  const password = `pw-${randomToken()}`;
  const withUserInfo = (context: string) =>
    localEndpoint(context).server.replace("https://", `https://admin:${password}@`);
  const hubConfig = await dir.write("hub.yaml", kubeconfigFor("prod", "prod", withUserInfo("prod")));
  const hub = HubProcess.start({
    clusters: ["all"],
    kubeconfigs: [hubConfig],
    args: ["--cluster-secrets", ns.name, "--namespace", ns.name, "--log-level", "debug"],
  });
  try {
    await hub.waitReady(HANG_GUARD_MS);
    const served = `userinfo-${ns.name.slice(-6)}`;
    const broken = `badurl-${ns.name.slice(-6)}`;
    await kubectlOk("prod", ["apply", "-f", "-"], {
      stdin: secretManifest(ns.name, served, kubeconfigFor("dev", "x", withUserInfo("dev"))),
    });
    // Not a valid URL (no host): its error quotes the URL, which must come out redacted.
    await kubectlOk("prod", ["apply", "-f", "-"], {
      stdin: secretManifest(ns.name, broken, kubeconfigFor("dev", "x", `https://admin:${password}@`)),
    });
    const status = await hub.waitStatus(
      (s) => s.clusters[served]?.state === "watching" && /invalid server URL/.test(s.clusters[broken]?.lastError ?? ""),
      HANG_GUARD_MS,
      "the Secret with user info served and the broken one refused",
    );
    assert.equal(status.clusters.prod.state, "watching");
    assert.match(status.clusters[broken].lastError, /\[redacted\]@/);
    await kubectlOk("prod", ["apply", "-f", "-"], {
      stdin: `apiVersion: demo.operator/v1\nkind: Uuid\nmetadata:\n  name: via-userinfo\n  namespace: ${ns.name}\n`,
    });
    await uuidOf("prod", ns.name, "via-userinfo");
    assert.ok(hub.logs.some((l) => l.includes("cluster engaged")), "the hub logged the engagements");
    for (const text of [...hub.logs, (await hub.get("/status")).text, (await hub.get("/metrics")).text]) {
      assert.ok(!text.includes(password), `the password leaked: ${text.slice(0, 300)}`);
    }
  } finally {
    await hub.stop();
  }
});

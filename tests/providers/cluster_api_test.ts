// End-to-end: Cluster API `Cluster` objects (CRD from sigs.k8s.io/cluster-api@v1.14.2) and their kubeconfig Secrets in
// the home cluster (prod) register clusters with a running hub; and providers side by side, with and without prefixes.

import assert from "node:assert/strict";
import { type ClusterApi, localApi, UUID_V4, waitFor } from "../../dev/support/cluster_api.ts";
import { installClusterApiCrd } from "../../dev/support/cluster_api_crd.ts";
import { HubProcess } from "../../dev/support/hub_process.ts";
import { kubeconfigText, localEndpoint, requireClusters, tempDir, testNamespace } from "../support/mod.ts";
import { metricSeries, parseMetrics } from "../support/prometheus_text.ts";

/** Hang guard: a Cluster is engaged and a Uuid reconciled in well under 2 s here; 60 s is far beyond 5× that. */
const HANG_GUARD_MS = 60_000;

const CAPI = "/apis/cluster.x-k8s.io/v1beta2";
const MCR_LABEL = "sigs.k8s.io/multicluster-runtime-kubeconfig";

/** A kubeconfig for local cluster `context` with its inline admin token (or `user` instead), context renamed. */
function kubeconfigFor(context: string, name: string, user?: { tokenFile: string }): string {
  const c = localEndpoint(context);
  return kubeconfigText([{ name, server: c.server, caPem: c.caPem, user: user ?? { token: c.token } }]);
}

/** What Cluster API writes for a workload cluster: the `Cluster`, its `NAME-kubeconfig` Secret, and its phase. */
async function capiCluster(
  api: ClusterApi,
  ns: string,
  name: string,
  phase: string,
  kubeconfig: string,
): Promise<void> {
  await api.request("POST", `/api/v1/namespaces/${ns}/secrets`, {
    metadata: { name: `${name}-kubeconfig`, namespace: ns, labels: { "cluster.x-k8s.io/cluster-name": name } },
    type: "cluster.x-k8s.io/secret",
    data: { value: btoa(kubeconfig) },
  });
  await api.request("POST", `${CAPI}/namespaces/${ns}/clusters`, {
    apiVersion: "cluster.x-k8s.io/v1beta2",
    kind: "Cluster",
    metadata: { name, namespace: ns },
    spec: { controlPlaneEndpoint: { host: "127.0.0.1", port: 6443 } },
  });
  await setPhase(api, ns, name, phase);
}

/** Sets the phase through the status subresource, as Cluster API's controllers do. */
function setPhase(api: ClusterApi, ns: string, name: string, phase: string): Promise<unknown> {
  return api.request("PATCH", `${CAPI}/namespaces/${ns}/clusters/${name}/status`, { status: { phase } });
}

async function uuidOf(api: ClusterApi, ns: string, name: string): Promise<string> {
  return await waitFor(
    async () => {
      const u = (await api.getUuid(ns, name))?.status?.uuid;
      return typeof u === "string" && UUID_V4.test(u) ? u : undefined;
    },
    `Uuid ${api.name}/${ns}/${name} to get a UUID`,
    HANG_GUARD_MS,
    100,
  );
}

function figure(what: string, ms: number): void {
  console.log(`figure: ${what}: ${Math.round(ms)} ms`);
}

/** One hub on prod (its only --kubeconfig context, the home cluster) with `args`, until `fn` settles. */
async function withHub(
  ns: string,
  args: string[],
  fn: (hub: HubProcess, startedAt: number) => Promise<void>,
): Promise<void> {
  await using dir = await tempDir("capi-hub");
  const hubConfig = await dir.write("hub.yaml", kubeconfigFor("prod", "prod"));
  const startedAt = performance.now();
  const hub = HubProcess.start({
    clusters: ["all"],
    kubeconfigs: [hubConfig],
    args: ["--home-cluster", "prod", "--namespace", ns, "--operators", "uuid", ...args],
  });
  try {
    await hub.waitReady(HANG_GUARD_MS);
    await fn(hub, startedAt);
  } finally {
    await hub.stop();
  }
}

Deno.test("A Provisioned Cluster API Cluster registers NS/NAME from its kubeconfig Secret and reconciles a Uuid there; other phases and a tokenFile are not engaged; deleting the Cluster disengages it leak-free", async () => {
  requireClusters();
  await installClusterApiCrd("prod");
  await using ns = await testNamespace("capi-e2e", { contexts: ["prod", "staging"] });
  const prod = localApi("prod");
  const staging = localApi("staging");
  try {
    await withHub(ns.name, ["--cluster-api", ns.name], async (hub) => {
      const edge = `${ns.name}/edge`;
      // Not Provisioned yet, and a Secret whose kubeconfig names a token file: neither is engaged.
      await capiCluster(prod, ns.name, "pending", "Provisioning", kubeconfigFor("staging", "pending"));
      await capiCluster(
        prod,
        ns.name,
        "tf",
        "Provisioned",
        kubeconfigFor("staging", "tf", { tokenFile: "/var/run/secrets/kubernetes.io/serviceaccount/token" }),
      );
      const t0 = performance.now();
      await capiCluster(prod, ns.name, "edge", "Provisioned", kubeconfigFor("staging", "edge"));
      const status = await hub.waitStatus(
        (s) => s.clusters[edge]?.state === "watching",
        HANG_GUARD_MS,
        `${edge} watching`,
      );
      figure("Cluster API Cluster Provisioned to watching", performance.now() - t0);
      assert.equal(status.clusters[edge].provider, "cluster-api");
      assert.equal(status.providers["cluster-api"].state, "watching");
      assert.deepEqual(status.providers["cluster-api"].watches, [`prod:${ns.name}`]);

      // A Uuid in staging's namespace is reconciled through the Cluster API registration.
      await staging.createUuid(ns.name, "via-capi");
      await uuidOf(staging, ns.name, "via-capi");

      // The refused kubeconfig: one clear line on its name, naming the field, never the path; never engaged.
      const refused = await hub.waitStatus(
        (s) => /tokenFile/.test(s.clusters[`${ns.name}/tf`]?.lastError ?? ""),
        HANG_GUARD_MS,
        "the tokenFile refusal",
      );
      const line: string = refused.clusters[`${ns.name}/tf`].lastError;
      console.log(`refusal: ${line}`);
      assert.equal(line.includes("\n"), false);
      assert.doesNotMatch(line, /serviceaccount\/token/);
      assert.equal(refused.clusters[`${ns.name}/tf`].state, "registering");
      // The Cluster still provisioning: not a cluster entry, but named in the provider's section.
      assert.equal(`${ns.name}/pending` in refused.clusters, false);
      const pendingWhy = refused.providers["cluster-api"].errors.find((e: { source: string }) =>
        e.source === `${ns.name}/pending`
      );
      assert.match(pendingWhy?.error ?? "", /is in phase "Provisioning"; it is engaged once Provisioned/);

      // Its phase leaving Provisioned disengages it; back to Provisioned engages it again.
      await setPhase(prod, ns.name, "edge", "Deleting");
      await hub.waitStatus((s) => !(edge in s.clusters), HANG_GUARD_MS, `${edge} disengaged on phase Deleting`);
      await setPhase(prod, ns.name, "edge", "Provisioned");
      await hub.waitStatus((s) => s.clusters[edge]?.state === "watching", HANG_GUARD_MS, `${edge} engaged again`);

      // Deleting the Cluster disengages it: gone from /status and from every /metrics series.
      await prod.request("DELETE", `${CAPI}/namespaces/${ns.name}/clusters/edge`);
      await hub.waitStatus((s) => !(edge in s.clusters), HANG_GUARD_MS, `${edge} gone from /status`);
      const metrics = (await hub.get("/metrics")).text;
      const left = metrics.split("\n").filter((l) => l.includes(`cluster="${edge}"`));
      assert.deepEqual(left, [], "no series of the disengaged cluster");
      assert.equal(metricSeries(parseMetrics(metrics), "hub_clusters_registered", { provider: "cluster-api" }), 0);
    });
  } finally {
    prod.close();
    staging.close();
  }
});

Deno.test("Providers side by side: a labelled Secret and a Cluster API Cluster for one cluster are two prefixed names without collision; without prefixes a dropped file taking the Cluster's name collides and the first keeps it", async () => {
  requireClusters();
  await installClusterApiCrd("prod");
  await using ns = await testNamespace("capi-side", { contexts: ["prod", "staging"] });
  await using dir = await tempDir("capi-side");
  const prod = localApi("prod");
  try {
    const capiName = `${ns.name}/edge`;
    await prod.request("POST", `/api/v1/namespaces/${ns.name}/secrets`, {
      metadata: { name: "edge", namespace: ns.name, labels: { [MCR_LABEL]: "true" } },
      data: { kubeconfig: btoa(kubeconfigFor("staging", "edge")) },
    });
    await capiCluster(prod, ns.name, "edge", "Provisioned", kubeconfigFor("staging", "edge"));

    const prefixed = ["--cluster-name-prefix", "secret=sec#,cluster-api=capi#"];
    await withHub(
      ns.name,
      ["--cluster-secrets", ns.name, "--cluster-api", ns.name, ...prefixed],
      async (hub, startedAt) => {
        const s = await hub.waitStatus(
          (s) => s.clusters["sec#edge"]?.state === "watching" && s.clusters[`capi#${capiName}`]?.state === "watching",
          HANG_GUARD_MS,
          "both prefixed names watching",
        );
        figure("hub start to both prefixed names watching", performance.now() - startedAt);
        assert.equal(s.clusters["sec#edge"].provider, "secret");
        assert.equal(s.clusters[`capi#${capiName}`].provider, "cluster-api");
        assert.equal("edge" in s.clusters || capiName in s.clusters, false, "no unprefixed name");
        assert.deepEqual(s.providers.secret.errors, []);
        assert.deepEqual(s.providers["cluster-api"].errors, []);
        const m = parseMetrics((await hub.get("/metrics")).text);
        assert.equal(metricSeries(m, "hub_cluster_name_collisions", { reason: "duplicate" }), 0);
        assert.equal(metricSeries(m, "hub_clusters_registered", { provider: "secret" }), 1);
        assert.equal(metricSeries(m, "hub_clusters_registered", { provider: "cluster-api" }), 1);
      },
    );

    // No prefixes: the Secret is `edge`, the Cluster `NS/edge` (distinct names); a file dropped into --cluster-dir
    // whose context is also `NS/edge` is read first at start-up and keeps the name; the Cluster is the duplicate.
    const clusterDir = `${dir.path}/clusters`;
    await Deno.mkdir(clusterDir);
    await dir.write("clusters/dropped.yaml", kubeconfigFor("staging", capiName));
    const args = ["--cluster-secrets", ns.name, "--cluster-api", ns.name, "--cluster-dir", clusterDir];
    await withHub(ns.name, args, async (hub) => {
      const s = await hub.waitStatus(
        (s) => s.clusters.edge?.state === "watching" && s.providers["cluster-api"]?.errors.length === 1,
        HANG_GUARD_MS,
        "the Secret served and the Cluster's collision shown",
      );
      assert.equal(s.clusters[capiName].provider, "folder", "the first claimant keeps the name");
      assert.equal(s.clusters.edge.provider, "secret");
      assert.match(
        s.providers["cluster-api"].errors[0].error,
        new RegExp(
          `name collision: cluster "${capiName}" is already registered by folder .*dropped\\.yaml; ` +
            `cluster-api ${capiName} is ignored until renamed or until that one goes`,
        ),
      );
      const m = parseMetrics((await hub.get("/metrics")).text);
      assert.equal(metricSeries(m, "hub_cluster_name_collisions", { reason: "duplicate" }), 1);
      // Once the file goes, the Cluster gets the name.
      await Deno.remove(`${clusterDir}/dropped.yaml`);
      await hub.waitStatus(
        (s) => s.clusters[capiName]?.provider === "cluster-api" && s.clusters[capiName]?.state === "watching",
        HANG_GUARD_MS,
        "the Cluster serving its name once the file is gone",
      );
    });
  } finally {
    prod.close();
  }
});

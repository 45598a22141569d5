// Tests of the Cluster API provider: its projections (pure), and its decisions against the real local apiserver (context
// prod, the home cluster) with Cluster API's own CRD, watching a namespace of the test's own, with a registry of our
// own that records what it is told.

import assert from "node:assert/strict";
import { waitFor } from "../../../../dev/support/cluster_api.ts";
import { installClusterApiCrd } from "../../../../dev/support/cluster_api_crd.ts";
import { KUBECONFIG_PATH } from "../../../../dev/clusters/clusters.ts";
import { inLocalNamespace } from "../../../../dev/support/local_client.ts";
import { type KubeClient, loadContexts } from "../../../kube/mod.ts";
import { silentLogger } from "../../../util/mod.ts";
import {
  CLUSTER_API_GROUP_VERSION,
  CLUSTER_NAME_LABEL,
  ClusterApiProvider,
  clusterOfSecretKey,
  projectCluster,
  projectSecret,
} from "./cluster_api_provider.ts";
import type { ClusterOffer, ProviderWatch } from "../cluster_offer.ts";
import type { ClusterRegistry } from "../registry.ts";

/** Hang guard: a list and a watch on a local apiserver; 30 s is far above any run seen. */
const HANG_GUARD_MS = 30_000;

class RecordingRegistry {
  readonly calls: string[] = [];
  readonly offers = new Map<string, ClusterOffer>();
  readonly reasons = new Map<string, string>();
  watch: (() => ProviderWatch) | undefined;
  attach(provider: string, watch: () => ProviderWatch): void {
    assert.equal(provider, "cluster-api");
    this.watch = watch;
  }
  offer(provider: string, source: string, offers: ClusterOffer[]): void {
    assert.equal(provider, "cluster-api");
    this.calls.push(`offer ${source}`);
    this.offers.set(source, offers[0]);
  }
  withdraw(_provider: string, source: string): void {
    if (this.offers.delete(source)) this.calls.push(`withdraw ${source}`);
  }
  markUnusable(source: string, error: string | undefined): void {
    if (error === undefined) this.reasons.delete(source);
    else this.reasons.set(source, error);
  }
}

function kubeconfig(server: string, user: string): string {
  return [
    "apiVersion: v1",
    "kind: Config",
    "current-context: admin@edge",
    `clusters: [{name: edge, cluster: {server: "${server}"}}]`,
    `users: [{name: admin, user: ${user}}]`,
    "contexts: [{name: admin@edge, context: {cluster: edge, user: admin}}]",
    "",
  ].join("\n");
}

const clusters = (ns: string) => `/apis/${CLUSTER_API_GROUP_VERSION}/namespaces/${ns}/clusters`;

async function createCluster(client: KubeClient, ns: string, name: string, phase?: string): Promise<void> {
  await client.request("POST", clusters(ns), {
    body: {
      apiVersion: CLUSTER_API_GROUP_VERSION,
      kind: "Cluster",
      metadata: { name, namespace: ns },
      spec: { controlPlaneEndpoint: { host: "edge.example", port: 6443 } },
    },
  });
  if (phase) await setPhase(client, ns, name, phase);
}

function setPhase(client: KubeClient, ns: string, name: string, phase: string): Promise<unknown> {
  return client.request("PATCH", `${clusters(ns)}/${name}/status`, { body: { status: { phase } } });
}

function kubeconfigSecret(client: KubeClient, ns: string, name: string, cluster: string, value?: string) {
  return client.request("POST", `/api/v1/namespaces/${ns}/secrets`, {
    body: {
      metadata: { name, namespace: ns, labels: { [CLUSTER_NAME_LABEL]: cluster } },
      type: "cluster.x-k8s.io/secret",
      data: value === undefined ? { other: btoa("x") } : { value: btoa(value) },
    },
  });
}

/** Runs a ClusterApiProvider on namespace `ns` of prod until `fn` settles. */
function providing(fn: (client: KubeClient, ns: string, registry: RecordingRegistry) => Promise<void>) {
  return inLocalNamespace("prod", "capi-provider", async (client, ns) => {
    await installClusterApiCrd("prod");
    const [home] = (await loadContexts({ files: [KUBECONFIG_PATH] })).select(["prod"]);
    const registry = new RecordingRegistry();
    const p = new ClusterApiProvider({
      registry: Object.assign(registry, {
        unusable: (_p: string, s: string, e: string | undefined) => registry.markUnusable(s, e),
      }) as unknown as ClusterRegistry,
      home,
      namespaces: [ns],
      logger: silentLogger(),
    });
    const ac = new AbortController();
    const running = p.start(ac.signal);
    try {
      await waitFor(() => registry.watch?.().synced, "the first lists", HANG_GUARD_MS);
      await fn(client, ns, registry);
      assert.equal(registry.watch?.().state, "watching");
      assert.deepEqual(registry.watch?.().watches, [`prod:${ns}`]);
    } finally {
      ac.abort();
      await running;
    }
  });
}

Deno.test("clusterOfSecretKey() maps NS/NAME-kubeconfig to NS/NAME and nothing else", () => {
  assert.equal(clusterOfSecretKey("fleet/edge-kubeconfig"), "fleet/edge");
  assert.equal(clusterOfSecretKey("fleet/edge-ca"), undefined);
  assert.equal(clusterOfSecretKey("fleet/-kubeconfig"), undefined);
});

Deno.test("projectCluster() and projectSecret() keep identity, phase and a kubeconfig Secret's text, and no managedFields", () => {
  const meta = {
    name: "edge-kubeconfig",
    namespace: "fleet",
    resourceVersion: "7",
    labels: { [CLUSTER_NAME_LABEL]: "edge" },
    managedFields: [{ manager: "capi" }],
    annotations: { "kubectl.kubernetes.io/last-applied-configuration": '{"data":{}}' },
  };
  const c = projectCluster({ metadata: { ...meta, name: "edge" }, spec: { x: 1 }, status: { phase: "Provisioned" } });
  const plain = (o: unknown) => JSON.parse(JSON.stringify(o));
  assert.deepEqual(plain(c), {
    metadata: { name: "edge", namespace: "fleet", resourceVersion: "7" },
    phase: "Provisioned",
  });
  const s = projectSecret({ metadata: meta, data: { value: btoa("apiVersion: v1"), other: btoa("x") } });
  assert.deepEqual(plain(s), {
    metadata: { name: "edge-kubeconfig", namespace: "fleet", resourceVersion: "7" },
    clusterName: "edge",
    kubeconfig: "apiVersion: v1",
  });
  const ca = projectSecret({ metadata: { ...meta, name: "edge-ca" }, data: { "tls.key": btoa("KEY") } });
  assert.deepEqual(Object.keys(ca).sort(), ["clusterName", "metadata"], "another labelled Secret keeps no data");
});

Deno.test("ClusterApiProvider offers a Provisioned Cluster as NS/NAME from its kubeconfig Secret, and withdraws it when the Cluster goes", () =>
  providing(async (client, ns, registry) => {
    await kubeconfigSecret(
      client,
      ns,
      "edge-kubeconfig",
      "edge",
      kubeconfig("https://edge.example:6443", "{token: t0}"),
    );
    await kubeconfigSecret(client, ns, "edge-ca", "edge", "not a kubeconfig");
    await createCluster(client, ns, "edge", "Provisioned");
    const offer = await waitFor(() => registry.offers.get(`${ns}/edge`), "the edge offer", HANG_GUARD_MS);
    assert.equal(offer.name, `${ns}/edge`);
    assert.equal(offer.access?.server, "https://edge.example:6443");
    assert.equal(offer.error, undefined);
    assert.equal(registry.reasons.size, 0);
    await client.request("DELETE", `${clusters(ns)}/edge`);
    await waitFor(() => registry.calls.includes(`withdraw ${ns}/edge`), "edge withdrawn", HANG_GUARD_MS);
    assert.deepEqual(registry.calls, [`offer ${ns}/edge`, `withdraw ${ns}/edge`]);
  }));

Deno.test("ClusterApiProvider engages only in phase Provisioned and only once the Secret exists, naming why meanwhile", () =>
  providing(async (client, ns, registry) => {
    await createCluster(client, ns, "late", "Provisioning");
    // The Cluster is created, then its status written: the provider may first see it with no phase at all.
    const why = await waitFor(
      () => /"Provisioning"/.test(registry.reasons.get(`${ns}/late`) ?? "") && registry.reasons.get(`${ns}/late`),
      "the phase shown",
      HANG_GUARD_MS,
    );
    assert.match(
      why,
      new RegExp(`Cluster ${ns}/late in cluster "prod" is in phase "Provisioning"; it is engaged once Provisioned`),
    );
    await setPhase(client, ns, "late", "Provisioned");
    await waitFor(
      () => /has no Secret/.test(registry.reasons.get(`${ns}/late`) ?? ""),
      "the Secret awaited",
      HANG_GUARD_MS,
    );
    assert.match(
      registry.reasons.get(`${ns}/late`)!,
      new RegExp(`no Secret ${ns}/late-kubeconfig labelled cluster.x-k8s.io/cluster-name=late`),
    );
    await kubeconfigSecret(
      client,
      ns,
      "late-kubeconfig",
      "late",
      kubeconfig("https://late.example:6443", "{token: t1}"),
    );
    await waitFor(() => registry.offers.get(`${ns}/late`)?.access, "late offered", HANG_GUARD_MS);
    assert.equal(registry.reasons.has(`${ns}/late`), false);
    await setPhase(client, ns, "late", "Failed");
    await waitFor(() => registry.calls.includes(`withdraw ${ns}/late`), "withdrawn on Failed", HANG_GUARD_MS);
    assert.match(registry.reasons.get(`${ns}/late`)!, /is in phase "Failed"/);
    await setPhase(client, ns, "late", "Provisioned");
    await waitFor(() => registry.offers.get(`${ns}/late`)?.access, "offered again", HANG_GUARD_MS);
    await client.request("DELETE", `/api/v1/namespaces/${ns}/secrets/late-kubeconfig`);
    await waitFor(
      () => registry.calls.filter((c) => c === `withdraw ${ns}/late`).length === 2,
      "withdrawn with its Secret",
      HANG_GUARD_MS,
    );
  }));

Deno.test("ClusterApiProvider holds a kubeconfig Secret to the untrusted rules: a tokenFile or a missing key is an error on the name", () =>
  providing(async (client, ns, registry) => {
    await kubeconfigSecret(
      client,
      ns,
      "tf-kubeconfig",
      "tf",
      kubeconfig("https://tf.example:6443", "{tokenFile: /var/run/secrets/kubernetes.io/serviceaccount/token}"),
    );
    await kubeconfigSecret(client, ns, "nokey-kubeconfig", "nokey");
    await kubeconfigSecret(client, ns, "http-kubeconfig", "http", kubeconfig("http://plain.example:80", "{token: t2}"));
    for (const name of ["tf", "nokey", "http"]) await createCluster(client, ns, name, "Provisioned");
    await waitFor(() => registry.offers.size === 3, "three offers", HANG_GUARD_MS);
    for (const o of registry.offers.values()) assert.equal(o.access, undefined, o.name);
    assert.match(registry.offers.get(`${ns}/tf`)!.error!, /tokenFile/);
    assert.doesNotMatch(registry.offers.get(`${ns}/tf`)!.error!, /serviceaccount/, "names the field, not its value");
    assert.match(registry.offers.get(`${ns}/nokey`)!.error!, /has no data key "value"/);
    assert.match(registry.offers.get(`${ns}/http`)!.error!, /http/);
  }));

// End-to-end on prod: an operator (tests/fixtures/metadata_only_operator.ts) that owns ConfigMaps metadata-only and
// watches others metadata-only. Through a proxy in front of the apiserver (every request of the hub passes through it):
// the hub lists and watches ConfigMaps with the PartialObjectMetadata Accept headers and its own resource as plain JSON;
// the owned ConfigMap's changes, its data alone included, requeue the Website; the watch's map function (reading the
// watch's cache) receives PartialObjectMetadata with no `data`, also after a change of data alone.
// deno-lint-ignore-file no-explicit-any -- JSON from the apiserver and the hub's log lines are checked by the test itself.

import assert from "node:assert/strict";
import { localApi, waitFor } from "../dev/support/cluster_api.ts";
import { HubProcess } from "../dev/support/hub_process.ts";
import { PARTIAL_METADATA_ACCEPT, PARTIAL_METADATA_LIST_ACCEPT } from "../src/kube/mod.ts";
import { WATCHED_LABEL } from "./fixtures/metadata_only_operator.ts";
import { adminKubeconfigVia, proxyInFrontOf } from "./support/local_proxy.ts";
import { applySharedCrd, kubectlOk, testNamespace } from "./support/mod.ts";

const CLUSTER = "prod";
const VIA = "prod-via-proxy";
const CRD_FILE = new URL("../examples/website_crd.yaml", import.meta.url).pathname;
const OPERATOR_FILE = "tests/fixtures/metadata_only_operator.ts";
/** 4 KiB of data: what must never reach the hub's ConfigMap cache. */
const PAYLOAD = "x".repeat(4096);

/** The hub's `probe` log lines for Website `name`, parsed. */
function probes(hub: HubProcess, name: string): any[] {
  return hub.logs.flatMap((line) => {
    try {
      const o = JSON.parse(line);
      return o.msg === "probe" && o.website === name ? [o] : [];
    } catch {
      return [];
    }
  });
}

Deno.test("An operator owning and watching ConfigMaps metadata-only: lists and watches PartialObjectMetadata, is requeued by a change of data alone, and its watch cache holds no data", async () => {
  await applySharedCrd(CLUSTER, CRD_FILE);
  await kubectlOk(CLUSTER, ["wait", "--for=condition=Established", "crd/websites.examples.operator-hub.dev"]);
  await using ns = await testNamespace("sdk-metadata-only", { contexts: [CLUSTER] });
  const api = localApi(CLUSTER);
  const proxy = await proxyInFrontOf(CLUSTER);
  // Each GET of this namespace's collections, as `resource list|watch accept`.
  const gets: string[] = [];
  proxy.hook = (req) => {
    const collection = req.path.match(new RegExp(`/namespaces/${ns.name}/([a-z]+)$`));
    if (req.method === "GET" && collection) {
      gets.push(`${collection[1]} ${req.query.get("watch") === "true" ? "watch" : "list"} ${req.accept}`);
    }
    return undefined;
  };
  const dir = await Deno.makeTempDir({ prefix: "sdk-metadata-only-" });
  const kubeconfig = `${dir}/prod.yaml`;
  await Deno.writeTextFile(kubeconfig, adminKubeconfigVia(CLUSTER, proxy.url, VIA));
  const hub = HubProcess.start({
    clusters: [VIA],
    kubeconfigs: [kubeconfig],
    args: ["--namespace", ns.name, "--operators", "none", OPERATOR_FILE],
  });
  const cms = `/api/v1/namespaces/${ns.name}/configmaps`;
  try {
    await hub.waitReady();
    const site = await api.request("POST", `/apis/examples.operator-hub.dev/v1/namespaces/${ns.name}/websites`, {
      apiVersion: "examples.operator-hub.dev/v1",
      kind: "Website",
      metadata: { name: "site" },
      spec: { image: "web:1" },
    }) as any;
    // The owned child: the Website's controller owner reference and owns' label (as adopt() sets them).
    const owned = await api.request("POST", cms, {
      metadata: {
        name: "site",
        labels: { "operator-hub.dev/parent-resource": "websites.examples.operator-hub.dev" },
        ownerReferences: [{
          apiVersion: "examples.operator-hub.dev/v1",
          kind: "Website",
          name: "site",
          uid: site.metadata.uid,
          controller: true,
        }],
      },
      data: { payload: PAYLOAD },
    }) as any;
    const watched = await api.request("POST", cms, {
      metadata: { name: "watched", labels: { [WATCHED_LABEL]: "site" } },
      data: { payload: PAYLOAD },
    }) as any;
    const seen = (ownedRv: string, watchedRv: string) =>
      probes(hub, "site").find((p) =>
        p.owned === ownedRv && p.watched.some((w: any) => w.name === "watched" && w.resourceVersion === watchedRv)
      );
    const first = await waitFor(
      () => seen(owned.metadata.resourceVersion, watched.metadata.resourceVersion),
      "a reconcile that read both ConfigMaps",
      30_000,
    );
    assert.deepEqual(first.watched, [{
      name: "watched",
      apiVersion: "meta.k8s.io/v1",
      kind: "PartialObjectMetadata",
      fields: ["apiVersion", "kind", "metadata"],
      hasData: false,
      resourceVersion: watched.metadata.resourceVersion,
    }]);

    // A change of the owned child's data alone requeues the Website (owns), seen by its metadata-only watch.
    const ownedAfter = await api.request("PATCH", `${cms}/site`, { data: { payload: "y".repeat(4096) } }, {
      contentType: "application/merge-patch+json",
    }) as any;
    assert.notEqual(ownedAfter.metadata.resourceVersion, owned.metadata.resourceVersion);
    await waitFor(
      () => probes(hub, "site").some((p) => p.owned === ownedAfter.metadata.resourceVersion),
      "a reconcile after the owned ConfigMap's data changed",
      30_000,
    );
    // A change of the watched one's data alone reaches the map function, still as metadata.
    const watchedAfter = await api.request("PATCH", `${cms}/watched`, { data: { payload: "z".repeat(4096) } }, {
      contentType: "application/merge-patch+json",
    }) as any;
    const later = await waitFor(
      () => seen(ownedAfter.metadata.resourceVersion, watchedAfter.metadata.resourceVersion),
      "a reconcile after the watched ConfigMap's data changed",
      30_000,
    );
    assert.deepEqual(later.watched.map((w: any) => [w.kind, w.hasData, w.fields.join(",")]), [
      ["PartialObjectMetadata", false, "apiVersion,kind,metadata"],
    ]);

    // On the wire: ConfigMaps listed and watched as PartialObjectMetadata, Websites as plain JSON.
    const configMapGets = gets.filter((g) => g.startsWith("configmaps "));
    assert.ok(configMapGets.includes(`configmaps list ${PARTIAL_METADATA_LIST_ACCEPT}`), gets.join("\n"));
    assert.ok(configMapGets.includes(`configmaps watch ${PARTIAL_METADATA_ACCEPT}`), gets.join("\n"));
    assert.deepEqual(
      configMapGets.filter((g) => !g.endsWith(PARTIAL_METADATA_LIST_ACCEPT) && !g.endsWith(PARTIAL_METADATA_ACCEPT)),
      [],
      "every ConfigMap list and watch asked for metadata only",
    );
    assert.ok(gets.includes("websites list application/json"), gets.join("\n"));
  } finally {
    await hub.stop();
    await proxy.close();
    api.close();
    await Deno.remove(dir, { recursive: true });
  }
});

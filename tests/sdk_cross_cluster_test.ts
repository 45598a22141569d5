// End-to-end: a handler in one cluster makes and owns a child in another engaged cluster
// (tests/fixtures/website_mirror_operator.ts) on prod, staging and dev: a Website in prod gets its ConfigMap in
// staging and one in dev gets its ConfigMap in prod, labelled and annotated for their parent (no owner reference);
// the ConfigMap deleted by hand in staging requeues the Website in prod, which makes it again; deleting the Website
// removes the ConfigMap in staging through its delete handler.

import assert from "node:assert/strict";
import { localApi, waitFor } from "../dev/support/cluster_api.ts";
import { HubProcess } from "../dev/support/hub_process.ts";
import { applySharedCrd, kubectlOk, testNamespace } from "./support/mod.ts";
import { MIRROR_TO } from "./fixtures/website_mirror_operator.ts";

const CLUSTERS = ["prod", "staging", "dev"];
const CRD_FILE = new URL("../examples/website_crd.yaml", import.meta.url).pathname;
const WEBSITES = "/apis/examples.operator-hub.dev/v1";

Deno.test("A handler in prod makes and owns a ConfigMap in staging (and dev's in prod): deleted by hand it is made again, and the Website's delete handler removes it", async () => {
  const started = performance.now();
  await Promise.all(CLUSTERS.map(async (c) => {
    await applySharedCrd(c, CRD_FILE);
    await kubectlOk(c, ["wait", "--for=condition=Established", "crd/websites.examples.operator-hub.dev"]);
  }));
  const ns = await testNamespace("sdk-cross");
  const [prod, staging, dev] = CLUSTERS.map((c) => localApi(c));
  const cm = (name: string) => `/api/v1/namespaces/${ns.name}/configmaps/${name}`;
  const site = (name: string) => `${WEBSITES}/namespaces/${ns.name}/websites/${name}`;
  const hub = HubProcess.start({
    clusters: CLUSTERS,
    args: ["--namespace", ns.name, "--operators", "none", "tests/fixtures/website_mirror_operator.ts"],
  });
  try {
    await hub.waitReady();
    const website = (name: string, target: string) => ({
      apiVersion: "examples.operator-hub.dev/v1",
      kind: "Website",
      metadata: { name, annotations: { [MIRROR_TO]: target } },
      spec: { image: `web:${name}` },
    });
    await prod.request("POST", `${WEBSITES}/namespaces/${ns.name}/websites`, website("a", "staging"));
    await dev.request("POST", `${WEBSITES}/namespaces/${ns.name}/websites`, website("b", "prod"));

    // Made in the other cluster, marked as the parent's by labels and annotation, with no owner reference.
    const first = await waitFor(() => staging.find(cm("a-mirror")), "a-mirror in staging", 15_000);
    const b = await waitFor(() => prod.find(cm("b-mirror")), "b-mirror in prod", 15_000);
    for (const [obj, parent] of [[first, `prod/${ns.name}/a`], [b, `dev/${ns.name}/b`]]) {
      assert.equal(obj.metadata.ownerReferences, undefined, "no owner reference across clusters");
      assert.equal(obj.metadata.annotations["operator-hub.dev/parent"], parent);
      assert.equal(obj.metadata.labels["operator-hub.dev/parent-resource"], "websites.examples.operator-hub.dev");
    }
    assert.deepEqual(first.data, { image: "web:a", from: "prod" });
    assert.equal(await prod.find(cm("a-mirror")), undefined, "a's ConfigMap is not in its own cluster");
    assert.equal(await dev.find(cm("b-mirror")), undefined, "b's ConfigMap is not in its own cluster");

    // Deleted by hand in staging: the owns watch there requeues the Website in prod, whose handler makes it again.
    await staging.request("DELETE", cm("a-mirror"));
    const again = await waitFor(
      async () => {
        const o = await staging.find(cm("a-mirror"));
        return o && o.metadata.uid !== first.metadata.uid ? o : undefined;
      },
      "a-mirror made again in staging",
      15_000,
    );
    assert.equal(again.metadata.annotations["operator-hub.dev/parent"], `prod/${ns.name}/a`);

    // The Website deleted in prod: its delete handler removes the ConfigMap in staging, then its finalizer.
    await prod.request("DELETE", site("a"));
    await waitFor(async () => !(await staging.find(cm("a-mirror"))), "a-mirror removed from staging", 15_000);
    await waitFor(async () => !(await prod.find(site("a"))), "Website a gone from prod", 15_000);
    assert.ok(await prod.find(cm("b-mirror")), "b's ConfigMap in prod stays");
    assert.equal((await hub.stop("SIGTERM")).code, 0, hub.tail());
    console.log(`figure: sdk_cross_cluster scenario wall time ${((performance.now() - started) / 1000).toFixed(1)} s`);
  } finally {
    await hub.kill();
    // b's finalizer: the hub is gone, drop it so the namespace can go.
    await dev.request("PATCH", site("b"), { metadata: { finalizers: null } }).catch(() => {});
    [prod, staging, dev].forEach((a) => a.close());
    await ns.cleanup();
  }
});

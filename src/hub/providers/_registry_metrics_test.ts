// Unit tests of the registry's own series: a fixed set of label values, whatever is offered.
import assert from "node:assert/strict";
import * as prom from "../../util/prometheus.ts";
import type { ClusterAccess } from "../../kube/mod.ts";
import { Offers } from "./_offers.ts";
import { registerRegistryMetrics } from "./_registry_metrics.ts";
import type { ProviderName } from "./cluster_offer.ts";

Deno.test("registerRegistryMetrics() counts served clusters, collisions and refused offers in 27 series, never naming one", async () => {
  const offers = new Offers();
  const access = { name: "x", server: "https://127.0.0.1:1", source: "test" } as unknown as ClusterAccess;
  for (let i = 0; i < 500; i++) {
    offers.offer("secret", `hub/s-${i}`, [{
      name: `s-${i}`,
      error: "broken",
      endpointDigest: "",
      credentialsDigest: "",
    }]);
  }
  offers.offer("folder", "/c/ok.yaml", [{ name: "ok", access, endpointDigest: "e", credentialsDigest: "c" }]);
  const served = new Map<string, { provider: ProviderName }>([["ok", { provider: "folder" }]]);
  const registry = new prom.MetricRegistry();
  registerRegistryMetrics(registry, { served, offers, unusable: new Map() });
  const text = await registry.metrics();
  const series = text.split("\n").filter((l) => l && !l.startsWith("#"));
  assert.equal(series.length, 27, "5 providers registered + 2 collision reasons + 5 × 4 refusals");
  assert.match(text, /^hub_cluster_offers_refused\{provider="secret",reason="invalid"\} 500$/m);
  assert.match(text, /^hub_clusters_registered\{provider="folder"\} 1$/m);
  assert.ok(!/s-\d/.test(text));
});

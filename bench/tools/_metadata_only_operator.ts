// The operator bench/tools/metadata_only_rss.ts runs: it acts on Uuids (crds/uuid.yaml) and watches every ConfigMap of
// the hub's namespaces in the mode METADATA_ONLY_BENCH_MODE names, mapping none of them to a request:
// - `cached`: full objects, cached whole (a projection that keeps `data`: what a plain informer holds);
// - `full`: full objects on the wire, the hub's default projection for watches (identity, labels, annotations);
// - `metadata`: `metadataOnly: true` (PartialObjectMetadata on the wire and in the cache).

import { defineOperator, kinds, type StoredObject } from "../../sdk.ts";

const mode = Deno.env.get("METADATA_ONLY_BENCH_MODE") ?? "metadata";
if (!["cached", "full", "metadata"].includes(mode)) {
  throw new Error(`METADATA_ONLY_BENCH_MODE must be cached, full or metadata, got ${JSON.stringify(mode)}`);
}

/** `bench-configmap-watch`: a watch of ConfigMaps in the mode above, and a reconcile that does nothing. */
export const benchConfigMapWatch = defineOperator({
  name: "bench-configmap-watch",
  resource: { group: "demo.operator", version: "v1", kind: "Uuid", plural: "uuid" },
  watches: [{
    type: kinds.ConfigMap,
    ...(mode === "metadata" ? { metadataOnly: true } : {}),
    ...(mode === "cached" ? { project: (raw: Record<string, unknown>) => raw as StoredObject } : {}),
    map: () => [],
  }],
  async reconcile() {},
});

// Installs Cluster API's `Cluster` CRD (vendored from sigs.k8s.io/cluster-api@v1.14.2) into a local cluster, once.
//
// Guarantees: when the promise resolves, `/apis/cluster.x-k8s.io/v1beta2` serves `clusters` and `clusters/status`.
// Idempotent and safe to run from several test files at once (a server-side apply by one field manager, skipped
// when already served); it never deletes the CRD: the local clusters are shared.

import { REPO_ROOT } from "../build/build.ts";
import { applyCrds, KUBECONFIG_PATH } from "../clusters/clusters.ts";
import { apiserverGet, requireClusters } from "./local_clusters.ts";

/** The vendored CRD file; its first lines name the module version. */
export const CLUSTER_API_CRD_FILE = `${REPO_ROOT}/dev/support/fixtures/cluster_api/cluster.x-k8s.io_clusters.yaml`;

async function served(context: string): Promise<boolean> {
  const r = await apiserverGet(context, "/apis/cluster.x-k8s.io/v1beta2");
  if (r.status !== 200) return false;
  const names = ((JSON.parse(r.body) as { resources?: { name: string }[] }).resources ?? []).map((x) => x.name);
  return names.includes("clusters") && names.includes("clusters/status");
}

/** Installs the `clusters.cluster.x-k8s.io` CRD into `context` unless it is served already; waits until it is. */
export async function installClusterApiCrd(context: string, timeoutMs = 60_000): Promise<void> {
  requireClusters();
  if (await served(context)) return;
  await applyCrds(KUBECONFIG_PATH, context, [CLUSTER_API_CRD_FILE]);
  const deadline = performance.now() + timeoutMs;
  while (performance.now() < deadline) {
    if (await served(context)) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`cluster "${context}" did not serve cluster.x-k8s.io/v1beta2 clusters within ${timeoutMs / 1000}s`);
}

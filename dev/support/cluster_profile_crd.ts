// Installs the ClusterProfile CRD (vendored from sigs.k8s.io/cluster-inventory-api@v0.1.0) into a local cluster, once.
//
// Guarantees: when the promise resolves, `/apis/multicluster.x-k8s.io/v1alpha1` serves `clusterprofiles` and
// `clusterprofiles/status`. Idempotent and safe from several test files at once (a server-side apply by one field
// manager, skipped when already served); it never deletes the CRD: the local clusters are shared.

import { REPO_ROOT } from "../build/build.ts";
import { applyCrds, KUBECONFIG_PATH } from "../clusters/clusters.ts";
import { apiserverGet, requireClusters } from "./local_clusters.ts";

/** The vendored CRD file; its first line names the module version. */
export const CLUSTER_PROFILE_CRD_FILE =
  `${REPO_ROOT}/dev/support/fixtures/cluster_profile/multicluster.x-k8s.io_clusterprofiles.yaml`;

async function served(context: string): Promise<boolean> {
  const r = await apiserverGet(context, "/apis/multicluster.x-k8s.io/v1alpha1");
  if (r.status !== 200) return false;
  const names = ((JSON.parse(r.body) as { resources?: { name: string }[] }).resources ?? []).map((x) => x.name);
  return names.includes("clusterprofiles") && names.includes("clusterprofiles/status");
}

/** Installs `clusterprofiles.multicluster.x-k8s.io` into `context` unless it is served already; waits until it is. */
export async function installClusterProfileCrd(context: string, timeoutMs = 60_000): Promise<void> {
  requireClusters();
  if (await served(context)) return;
  await applyCrds(KUBECONFIG_PATH, context, [CLUSTER_PROFILE_CRD_FILE]);
  const deadline = performance.now() + timeoutMs;
  while (performance.now() < deadline) {
    if (await served(context)) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(
    `cluster "${context}" did not serve multicluster.x-k8s.io/v1alpha1 clusterprofiles within ${timeoutMs / 1000}s`,
  );
}

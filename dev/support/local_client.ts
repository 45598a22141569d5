// The hub's own KubeClient for one local cluster (clusters/local.yaml), for src/ tests that talk to a real apiserver,
// and a temporary folder for tests that write files.
import { KubeClient, loadContexts } from "../../src/kube/mod.ts";
import { KUBECONFIG_PATH } from "../clusters/clusters.ts";
import { requireClusters } from "./local_clusters.ts";
import { testNamespace } from "./namespace.ts";

/** A KubeClient for `context`; throws ClustersNotRunningError (how to start them) when the clusters are not up. */
export async function localKubeClient(context: string): Promise<KubeClient> {
  requireClusters();
  const [access] = (await loadContexts({ files: [KUBECONFIG_PATH] })).select([context]);
  return new KubeClient(access, { requestTimeoutMs: 15_000 });
}

/**
 * Runs `fn` with a client for `context` and a fresh namespace there (named from `prefix`); the namespace is deleted
 * and the client closed afterwards, also when `fn` throws.
 */
export async function inLocalNamespace(
  context: string,
  prefix: string,
  fn: (client: KubeClient, namespace: string) => Promise<void>,
): Promise<void> {
  const client = await localKubeClient(context);
  try {
    await using ns = await testNamespace(prefix, { contexts: [context] });
    await fn(client, ns.name);
  } finally {
    client.close();
  }
}

/** Runs `fn` with a fresh temporary folder, removed afterwards, also when `fn` throws. */
export async function withTempDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir();
  try {
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

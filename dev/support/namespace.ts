// A uniquely named namespace created in every local cluster for one test, and its cleanup.
//
// Cleanup drops the finalizers a hub that is no longer running left on the test's Uuids, then deletes the namespace.
// It does not wait for the namespace controller to finish (5–9 s per namespace on a loaded machine, ×24 tests): no
// user sees a test's teardown, and dev/clusters/controllers_test.ts proves that deletion completes.

import { apiserverAlive, clusterRecord, readStateSync } from "../clusters/clusters.ts";
import { ClusterApiError, localApi } from "./cluster_api.ts";
import { requireClusters } from "./local_clusters.ts";

/** A namespace with the same name in several clusters. */
export interface TestNamespace extends AsyncDisposable {
  name: string;
  /** The contexts it was created in. */
  contexts: string[];
  /** Deletes the test's Uuid objects and the namespace in every context whose apiserver is running. */
  cleanup(): Promise<void>;
}

/** Cleanup failed in at least one cluster whose apiserver is running. */
export class TestNamespaceCleanupError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "TestNamespaceCleanupError";
  }
}

/** Options of {@linkcode testNamespace}. */
export interface TestNamespaceOptions {
  /** Contexts to create it in; default every local cluster. */
  contexts?: string[];
}

function dnsLabel(prefix: string): string {
  const clean = prefix.toLowerCase().replace(/[^a-z0-9-]+/g, "-").replace(/^-+|-+$/g, "").slice(0, 48) || "test";
  const suffix = crypto.getRandomValues(new Uint8Array(4)).reduce((s, b) => s + b.toString(16).padStart(2, "0"), "");
  return `${clean}-${suffix}`;
}

/** Uuid objects of the local clusters' CRD (the article's and the seed's share the path). */
const UUIDS = "/apis/demo.operator/v1";

async function cleanupIn(context: string, name: string): Promise<void> {
  const state = readStateSync();
  if (!state || !apiserverAlive(clusterRecord(state, context))) return; // A fault test left it down on purpose.
  // Over the API, not kubectl: a test that leaves 500 Uuids would otherwise spawn 500 processes to clean them up.
  const api = localApi(context);
  try {
    let objects: { metadata: { name: string; finalizers?: string[] } }[] = [];
    try {
      objects = (await api.request("GET", `${UUIDS}/namespaces/${name}/uuid`)).items ?? [];
    } catch (err) {
      // No Uuid CRD in this cluster (a test removed it on purpose): nothing of ours to clean there.
      if (!(err instanceof ClusterApiError) || err.status !== 404) throw err;
    }
    const held = objects.filter((o) => (o.metadata.finalizers ?? []).length > 0);
    for (let i = 0; i < held.length; i += CLEANUP_CONCURRENCY) {
      await Promise.all(
        held.slice(i, i + CLEANUP_CONCURRENCY).map((o) =>
          api.request("PATCH", `${UUIDS}/namespaces/${name}/uuid/${o.metadata.name}`, {
            metadata: { finalizers: null },
          }).catch((err) => {
            if (!(err instanceof ClusterApiError) || err.status !== 404) throw err;
          })
        ),
      );
    }
    await api.deleteNamespace(name);
  } finally {
    api.close();
  }
}

/** Finalizer patches sent at once while cleaning up. */
const CLEANUP_CONCURRENCY = 16;

/** Creates namespace `<prefix>-<random>` in every local cluster (or in `contexts`). */
export async function testNamespace(prefix: string, options: TestNamespaceOptions = {}): Promise<TestNamespace> {
  const contexts = options.contexts ?? requireClusters().names;
  const name = dnsLabel(prefix);
  const cleanup = async () => {
    const results = await Promise.allSettled(contexts.map((context) => cleanupIn(context, name)));
    const failures = results.flatMap((r, i) => r.status === "rejected" ? [`${contexts[i]}: ${r.reason}`] : []);
    if (failures.length > 0) {
      throw new TestNamespaceCleanupError(`could not clean up test namespace ${name}: ${failures.join("; ")}`);
    }
  };
  const created = await Promise.allSettled(contexts.map(async (context) => {
    const api = localApi(context);
    try {
      await api.createNamespace(name);
    } finally {
      api.close();
    }
  }));
  const failed = created.find((r): r is PromiseRejectedResult => r.status === "rejected");
  if (failed) {
    await cleanup().catch(() => {});
    throw failed.reason;
  }
  return { name, contexts, cleanup, [Symbol.asyncDispose]: cleanup };
}

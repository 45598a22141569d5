// A uniquely named namespace created in every local cluster for one test, and its cleanup.
//
// Cleanup drops the finalizers a hub that is no longer running left on the test's Uuids, then deletes the namespace.
// It does not wait for the namespace controller to finish (5–9 s per namespace on a loaded machine, ×24 tests): no
// user sees a test's teardown, and tests/kube/controller_manager_test.ts proves that deletion completes.

import { apiserverAlive, clusterRecord, readStateSync } from "../kube/clusters.ts";
import { kubectl, KubectlError, kubectlOk } from "./kubectl.ts";
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

async function cleanupIn(context: string, name: string): Promise<void> {
  const state = readStateSync();
  if (!state || !apiserverAlive(clusterRecord(state, context))) return; // A fault test left it down on purpose.
  const list = await kubectl(context, ["get", "uuid", "-n", name, "-o", "name"]);
  if (list.code === 0) {
    const objects = list.stdout.split("\n").filter((line) => line.trim().length > 0);
    await Promise.all(
      objects.map((object) =>
        kubectl(context, ["patch", object, "-n", name, "--type=merge", "-p", '{"metadata":{"finalizers":null}}'])
      ),
    );
    if (objects.length > 0) {
      await kubectlOk(context, ["delete", "uuid", "--all", "-n", name, "--wait=false", "--ignore-not-found"]);
    }
  } else if (!/doesn't have a resource type|could not find the requested resource/.test(list.stderr)) {
    throw new KubectlError(context, ["get", "uuid", "-n", name, "-o", "name"], list);
  }
  await kubectlOk(context, ["delete", "namespace", name, "--wait=false", "--ignore-not-found"]);
}

/** Creates namespace `<prefix>-<random>` in every local cluster (or in `contexts`). */
export async function testNamespace(prefix: string, options: TestNamespaceOptions = {}): Promise<TestNamespace> {
  const contexts = options.contexts ?? requireClusters().names;
  const name = dnsLabel(prefix);
  const manifest = JSON.stringify({
    apiVersion: "v1",
    kind: "Namespace",
    metadata: { name, labels: { "operator-hub.test/ephemeral": "true" } },
  });
  const cleanup = async () => {
    const results = await Promise.allSettled(contexts.map((context) => cleanupIn(context, name)));
    const failures = results.flatMap((r, i) => r.status === "rejected" ? [`${contexts[i]}: ${r.reason}`] : []);
    if (failures.length > 0) {
      throw new TestNamespaceCleanupError(`could not clean up test namespace ${name}: ${failures.join("; ")}`);
    }
  };
  const created = await Promise.allSettled(
    contexts.map((context) => kubectlOk(context, ["create", "-f", "-"], { stdin: manifest })),
  );
  const failed = created.find((r): r is PromiseRejectedResult => r.status === "rejected");
  if (failed) {
    await cleanup().catch(() => {});
    throw failed.reason;
  }
  return { name, contexts, cleanup, [Symbol.asyncDispose]: cleanup };
}

// Foundation checks of the local clusters: real apiservers at the pinned version, the Uuid CRD, kubectl access.

import assert from "node:assert/strict";
import {
  apiserverGet,
  ClustersNotRunningError,
  DEFAULT_CLUSTER_NAMES,
  installProductionCrd,
  installSeedCrd,
  KUBE_VERSION,
  kubectl,
  kubectlOk,
  requireClusters,
  testNamespace,
} from "./support/mod.ts";

function uuidManifest(namespace: string, name: string): string {
  return `apiVersion: demo.operator/v1\nkind: Uuid\nmetadata:\n  name: ${name}\n  namespace: ${namespace}\nspec: {}\n`;
}

async function applyFromTempFile(context: string, manifest: string): Promise<string> {
  const file = await Deno.makeTempFile({ prefix: "uuid-", suffix: ".yaml" });
  try {
    await Deno.writeTextFile(file, manifest);
    return await kubectlOk(context, ["apply", "-f", file]);
  } finally {
    await Deno.remove(file);
  }
}

Deno.test("requireClusters() fails loudly, naming clusters:up, when the cluster state is missing", () => {
  assert.throws(
    () => requireClusters({ stateFile: "/nonexistent/state.json" }),
    (error: unknown) =>
      error instanceof ClustersNotRunningError && error.name === "ClustersNotRunningError" &&
      error.message.includes("local clusters are not running: start them with `deno task clusters:up`"),
  );
});

Deno.test("the local clusters prod, staging and dev are all running", () => {
  const clusters = requireClusters();
  for (const name of DEFAULT_CLUSTER_NAMES) assert.ok(clusters.names.includes(name), `missing cluster ${name}`);
});

for (const context of DEFAULT_CLUSTER_NAMES) {
  Deno.test(`kubectl apply -f of a Uuid manifest succeeds in the ${context} cluster`, async () => {
    requireClusters();
    const ns = await testNamespace(`foundation-${context}`, { contexts: [context] });
    try {
      const out = await applyFromTempFile(context, uuidManifest(ns.name, "first"));
      assert.match(out, /uuid\.demo\.operator\/first created/);
      const name = await kubectlOk(context, ["get", "uuid", "first", "-n", ns.name, "-o", "jsonpath={.metadata.name}"]);
      assert.equal(name, "first");
    } finally {
      await ns.cleanup();
    }
  });
}

Deno.test("kubectl get id prints the UUID and STATUS column headers in every cluster", async () => {
  const { names } = requireClusters();
  const ns = await testNamespace("foundation-columns");
  try {
    for (const context of names) {
      await applyFromTempFile(context, uuidManifest(ns.name, "columns"));
      const out = await kubectlOk(context, ["get", "id", "-n", ns.name]);
      const header = out.split("\n")[0].trim().split(/\s+/);
      assert.deepEqual(header, ["NAME", "UUID", "STATUS", "AGE"], `${context}: header was ${out.split("\n")[0]}`);
    }
  } finally {
    await ns.cleanup();
  }
});

Deno.test(`every local apiserver reports gitVersion ${KUBE_VERSION} on /version`, async () => {
  const { names } = requireClusters();
  for (const name of names) {
    const response = await apiserverGet(name, "/version");
    assert.equal(response.status, 200, `${name}: /version answered ${response.status}`);
    const version = JSON.parse(response.body) as { gitVersion: string; major: string; minor: string };
    assert.equal(version.gitVersion, KUBE_VERSION, `${name}: gitVersion`);
  }
});

Deno.test("each apiserver stores its objects apart: a Uuid created in prod is not visible in staging", async () => {
  requireClusters();
  const ns = await testNamespace("foundation-isolation", { contexts: ["prod", "staging"] });
  try {
    await applyFromTempFile("prod", uuidManifest(ns.name, "only-in-prod"));
    const other = await kubectl("staging", ["get", "uuid", "only-in-prod", "-n", ns.name]);
    assert.notEqual(other.code, 0);
    assert.match(other.stderr, /NotFound|not found/);
  } finally {
    await ns.cleanup();
  }
});

/** One field of the Uuid CRD in `context`, read by kubectl's jsonpath. */
function uuidCrdField(context: string, jsonpath: string): Promise<string> {
  return kubectlOk(context, ["get", "crd", "uuid.demo.operator", "-o", `jsonpath=${jsonpath}`]);
}

Deno.test("the seed article's CRD installs into a cluster and is Established, then the production CRD returns", async () => {
  requireClusters();
  const context = "dev";
  try {
    await installSeedCrd(context);
    const established = await uuidCrdField(context, '{.status.conditions[?(@.type=="Established")].status}');
    assert.equal(established, "True");
    const subresources = await uuidCrdField(context, "{.spec.versions[0].subresources}");
    assert.equal(subresources, "", "the seed CRD has no status subresource");
    const columns = await uuidCrdField(context, "{.spec.versions[0].additionalPrinterColumns[*].name}");
    assert.equal(columns, "UUID Status");
  } finally {
    await installProductionCrd(context);
  }
  assert.match(await uuidCrdField(context, "{.spec.versions[0].subresources}"), /status/);
});

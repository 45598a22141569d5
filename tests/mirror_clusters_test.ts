// End-to-end: the Mirror operator (on by default) as target clusters come and go: a cluster engaged after a Mirror
// exists gets its copy at once and needs no Mirror CRD, and a deleted Mirror's finalizer gives up on a target that
// stays unreachable, with a Warning Event.
// deno-lint-ignore-file no-explicit-any -- JSON from the API servers is checked by the test itself.

import assert from "node:assert/strict";
import { localEndpoint, waitFor } from "../dev/support/cluster_api.ts";
import { HubProcess } from "../dev/support/hub_process.ts";
import {
  FaultApiserver,
  kubeconfigText,
  kubectl,
  kubectlOk,
  PRODUCTION_CRD_FILE,
  requireClusters,
  tempDir,
  testNamespace,
} from "./support/mod.ts";

/**
 * Hang guard for the copy in a cluster engaged later: it normally lands within a few seconds of the kubeconfig file
 * appearing. Without the requeue on engage it would wait for the Mirror's 60 s re-check, which this guard (far beyond
 * 5× the median) stays below, so the test fails then.
 */
const ENGAGE_GUARD_MS = 30_000;

/** A kubeconfig with the local clusters `contexts` (admin tokens), for a hub that registers more from a folder. */
function localKubeconfig(contexts: string[]): string {
  return kubeconfigText(contexts.map((name) => {
    const c = localEndpoint(name);
    return { name, server: c.server, caPem: c.caPem, user: { token: c.token } };
  }));
}

async function getJson(run: (args: string[]) => Promise<string>, args: string[]): Promise<any | undefined> {
  const out = await run(["get", ...args, "-o", "json", "--ignore-not-found"]);
  return out.trim() ? JSON.parse(out) : undefined;
}

const inProd = (args: string[]) => kubectlOk("prod", args);
const inStaging = (args: string[]) => kubectlOk("staging", args);

async function mirrorStatus(ns: string, name: string): Promise<any> {
  return (await getJson(inProd, ["mirror", name, "-n", ns]))?.status ?? {};
}

function mirrorManifest(ns: string, name: string, clusters: string[]): string {
  return JSON.stringify({
    apiVersion: "demo.operator/v1",
    kind: "Mirror",
    metadata: { name, namespace: ns },
    spec: { source: { kind: "ConfigMap", name }, clusters },
  });
}

/** A private apiserver with the Uuid CRD only (no Mirror CRD), registered with the hub by a file in `clusterDir`. */
async function startLateCluster(name: string): Promise<FaultApiserver> {
  const late = await FaultApiserver.start({ name, installCrds: false });
  await late.installCrdFiles([PRODUCTION_CRD_FILE], true);
  return late;
}

Deno.test('A cluster engaged after a Mirror with clusters ["*"] exists gets its copy at once, and without the Mirror CRD it is watching, not missing-crd, as it is not the home cluster', async () => {
  requireClusters();
  await using ns = await testNamespace("mirror-late", { contexts: ["prod", "staging"] });
  await using dir = await tempDir("mirror-late");
  const clusterDir = `${dir.path}/clusters`;
  await Deno.mkdir(clusterDir);
  const late = await startLateCluster("late");
  const hubConfig = await dir.write("hub.yaml", localKubeconfig(["prod", "staging"]));
  // No --operators: every built-in operator runs, the Mirror among them.
  const hub = HubProcess.start({
    clusters: ["all"],
    kubeconfigs: [hubConfig],
    args: ["--cluster-dir", clusterDir, "--home-cluster", "prod", "--namespace", ns.name],
  });
  try {
    // The premise: the late cluster has no Mirror CRD.
    assert.equal(
      (await late.kubectl(["get", "crd", "-o", "name"])).trim(),
      "customresourcedefinition.apiextensions.k8s.io/uuid.demo.operator",
    );
    await hub.waitReady();
    const before = (await hub.get("/status")).body;
    assert.deepEqual(Object.keys(before.clusters.prod.operators).sort(), ["mirror", "uuid"], "on by default");
    await inProd(["create", "configmap", "shared", "-n", ns.name, "--from-literal=k=v"]);
    await kubectlOk("prod", ["apply", "-f", "-"], { stdin: mirrorManifest(ns.name, "shared", ["*"]) });
    await waitFor(async () => {
      const s = await mirrorStatus(ns.name, "shared");
      return s.synced === "1/1" && s.targets?.[0]?.cluster === "staging";
    }, "shared: 1/1, staging InSync");

    // The late cluster's kubeconfig dropped into --cluster-dir: engaged, and the Mirror selecting it is requeued.
    await Deno.copyFile(late.adminKubeconfig, `${clusterDir}/late.yaml`);
    const copy = await waitFor(
      () => getJson((a) => late.kubectl(a), ["configmap", "shared", "-n", ns.name]),
      "late: the copy of shared",
      ENGAGE_GUARD_MS,
    );
    assert.deepEqual(copy.data, { k: "v" });
    assert.equal(copy.metadata.labels["operator-hub.dev/mirror"], "copy");
    const status = await waitFor(async () => {
      const s = await mirrorStatus(ns.name, "shared");
      return s.synced === "2/2" ? s : undefined;
    }, "shared: 2/2");
    assert.deepEqual(status.targets.map((t: any) => [t.cluster, t.state]), [["late", "InSync"], ["staging", "InSync"]]);

    // No Mirror CRD there, and no missing-crd: only the copies' verbs and watch are the Mirror's business there.
    const health = await waitFor(async () => {
      const body = (await hub.get("/status")).body;
      return body.clusters.late?.operators?.uuid?.state === "watching" ? body : undefined;
    }, "late: uuid watching");
    assert.equal(health.clusters.late.operators.mirror.state, "watching", JSON.stringify(health.clusters.late));
    assert.equal(health.clusters.late.state, "watching");
    assert.equal(health.ready, true, JSON.stringify(health.notReady));
    assert.equal(health.clusters.late.operators.mirror.lastError, null);

    // The Mirror deleted: both copies go.
    await kubectlOk("prod", ["delete", "mirror", "shared", "-n", ns.name, "--timeout=60s"]);
    assert.equal(await getJson((a) => late.kubectl(a), ["configmap", "shared", "-n", ns.name]), undefined);
    assert.equal(await getJson(inStaging, ["configmap", "shared", "-n", ns.name]), undefined);
  } catch (err) {
    console.error(hub.logs.filter((l) => /"level":"(warn|error)"/.test(l)).slice(-30).join("\n"));
    throw err;
  } finally {
    await kubectl("prod", ["delete", "mirror", "--all", "-n", ns.name, "--wait=false"]);
    await hub.stop("SIGTERM");
    await late.destroy();
  }
});

Deno.test("A deleted Mirror's finalizer removes the reachable copy, gives up on a target killed -9 after --mirror-orphan-on-unreachable-after, and says so in a Warning Event", async () => {
  requireClusters();
  await using ns = await testNamespace("mirror-orphan", { contexts: ["prod", "staging"] });
  await using dir = await tempDir("mirror-orphan");
  const gone = await startLateCluster("gone");
  const hubConfig = await dir.write("hub.yaml", localKubeconfig(["prod", "staging"]));
  const goneConfig = `${dir.path}/gone.yaml`;
  await Deno.copyFile(gone.adminKubeconfig, goneConfig);
  const hub = HubProcess.start({
    clusters: ["prod", "staging", "gone"],
    kubeconfigs: [hubConfig, goneConfig],
    args: ["--home-cluster", "prod", "--mirror-orphan-on-unreachable-after", "3", "--namespace", ns.name],
  });
  try {
    await hub.waitReady();
    await inProd(["create", "configmap", "feed", "-n", ns.name, "--from-literal=v=1"]);
    await kubectlOk("prod", ["apply", "-f", "-"], { stdin: mirrorManifest(ns.name, "feed", ["staging", "gone"]) });
    await waitFor(async () => (await mirrorStatus(ns.name, "feed")).synced === "2/2", "feed: 2/2");

    await gone.stop("SIGKILL");
    await kubectlOk("prod", ["delete", "mirror", "feed", "-n", ns.name, "--wait=false"]);
    // Retried while the orphan window lasts, then given up: the Mirror goes, the reachable copy with it.
    await waitFor(
      async () => !(await getJson(inProd, ["mirror", "feed", "-n", ns.name])),
      "feed: the finalizer gave up and the Mirror is gone",
    );
    assert.equal(await getJson(inStaging, ["configmap", "feed", "-n", ns.name]), undefined, "staging's copy removed");
    const events = await waitFor(async () => {
      const list = await getJson(inProd, ["events", "-n", ns.name, "--field-selector", "reason=CopiesOrphaned"]);
      return list?.items?.length ? list.items : undefined;
    }, "a CopiesOrphaned Event");
    assert.equal(events[0].type, "Warning");
    assert.equal(events[0].involvedObject.kind, "Mirror");
    assert.equal(events[0].involvedObject.name, "feed");
    assert.match(events[0].message, /gave up removing copies after 3 s: gone: /);
    assert.doesNotMatch(events[0].message, /staging/, "only the unreachable target is named");
    assert.ok(
      hub.logs.some((l) => l.includes("copies not removed yet; retrying")),
      "the finalizer retried before it gave up",
    );
  } catch (err) {
    console.error(hub.logs.filter((l) => /"level":"(warn|error)"/.test(l)).slice(-30).join("\n"));
    throw err;
  } finally {
    await kubectl("prod", [
      "patch",
      "mirror",
      "feed",
      "-n",
      ns.name,
      "--type=merge",
      "-p",
      '{"metadata":{"finalizers":null}}',
    ]);
    await hub.stop("SIGTERM");
    await gone.destroy();
  }
});

// End-to-end: where a Mirror may write (never kube-system, only --mirror-namespaces when given, no namespace created
// then), and what its source watch caches (only the sources, never the rest of the home cluster's objects), against
// the local prod and staging apiservers. Every hub runs with --namespace of its own.
// deno-lint-ignore-file no-explicit-any -- JSON from the API servers is checked by the test itself.

import assert from "node:assert/strict";
import { waitFor } from "../dev/support/cluster_api.ts";
import { HubProcess } from "../dev/support/hub_process.ts";
import { localKubeClient } from "../dev/support/local_client.ts";
import { kubectl, kubectlOk, testNamespace } from "./support/mod.ts";
import { watchOtherResources } from "../src/hub/cluster/_watched_resources.ts";
import { mirrorOperator } from "../src/operators/mirror/mod.ts";
import { LAST_APPLIED_ANNOTATION, type StoredObject } from "../src/runtime/mod.ts";
import { silentLogger, SystemClock } from "../src/util/mod.ts";

/** Hang guard: a local hub syncs a Mirror in about a second; 60 s is far above any run seen. */
const HANG_GUARD_MS = 60_000;
const CLUSTERS = ["prod", "staging"];

function randomName(prefix: string): string {
  return `${prefix}-${crypto.randomUUID().slice(0, 8)}`;
}

function configMap(namespace: string, name: string, data: Record<string, string> = { key: "value" }) {
  return { apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace }, data };
}

function mirror(namespace: string, name: string, source: string, targetNamespace?: string) {
  return {
    apiVersion: "demo.operator/v1",
    kind: "Mirror",
    metadata: { name, namespace },
    spec: {
      source: { kind: "ConfigMap", name: source },
      clusters: ["staging"],
      ...(targetNamespace ? { targetNamespace } : {}),
    },
  };
}

async function apply(context: string, ...objects: unknown[]): Promise<void> {
  await kubectlOk(context, ["apply", "-f", "-"], {
    stdin: JSON.stringify({ apiVersion: "v1", kind: "List", items: objects }),
  });
}

async function mirrorStatus(namespace: string, name: string): Promise<any> {
  const r = await kubectl("prod", ["get", "mirror", name, "-n", namespace, "-o", "json"]);
  return r.code === 0 ? JSON.parse(r.stdout).status : undefined;
}

/** Whether ConfigMap `name` exists in `namespace` of `context` (a refused get other than NotFound throws). */
async function exists(context: string, namespace: string, name: string): Promise<boolean> {
  const r = await kubectl(context, ["get", "configmap", name, "-n", namespace, "-o", "name"]);
  if (r.code === 0) return true;
  if (/NotFound|not found/.test(r.stderr)) return false;
  throw new Error(`kubectl get configmap ${namespace}/${name} in ${context}: ${r.stderr}`);
}

/** After the hub stopped: the Mirrors' finalizers would otherwise keep the test namespace from ever going. */
async function dropMirrorFinalizers(namespace: string): Promise<void> {
  const out = await kubectlOk("prod", ["get", "mirror", "-n", namespace, "-o", "name"]);
  for (const name of out.split("\n").filter(Boolean)) {
    await kubectlOk("prod", ["patch", name, "-n", namespace, "--type=merge", "-p", '{"metadata":{"finalizers":null}}']);
  }
}

async function warningEvents(namespace: string, mirrorName: string): Promise<any[]> {
  const out = await kubectlOk("prod", [
    "get",
    "events",
    "-n",
    namespace,
    "--field-selector",
    `involvedObject.name=${mirrorName},type=Warning`,
    "-o",
    "json",
  ]);
  return JSON.parse(out).items;
}

Deno.test("A Mirror aiming at kube-system is refused with state Error and a Warning Event; nothing lands in kube-system", async () => {
  await using ns = await testNamespace("mirror-reach-system", { contexts: CLUSTERS });
  const source = randomName("reach-source");
  await apply("prod", configMap(ns.name, source));
  const hub = HubProcess.start({
    clusters: CLUSTERS,
    args: ["--operators", "mirror", "--home-cluster", "prod", "--namespace", ns.name],
  });
  try {
    await hub.waitReady(HANG_GUARD_MS);
    // The positive control: the same hub copies the same source into the Mirror's own namespace.
    await apply("prod", mirror(ns.name, "control", source), mirror(ns.name, "system", source, "kube-system"));
    const control = await waitFor(
      async () => {
        const s = await mirrorStatus(ns.name, "control");
        return s?.targets?.[0]?.state === "InSync" ? s : undefined;
      },
      "the control Mirror in sync",
      HANG_GUARD_MS,
      200,
    );
    assert.equal(control.state, "Ok");
    assert.ok(await exists("staging", ns.name, source), "the control copy exists");
    const refused = await waitFor(
      async () => {
        const s = await mirrorStatus(ns.name, "system");
        return s?.state === "Error" ? s : undefined;
      },
      "the kube-system Mirror refused",
      HANG_GUARD_MS,
      200,
    );
    assert.match(refused.message, /"kube-system" is a system namespace/);
    assert.deepEqual(refused.targets, []);
    assert.equal(refused.conditions[0].reason, "NamespaceNotAllowed");
    assert.equal(await exists("staging", "kube-system", source), false, "no copy in staging's kube-system");
    assert.equal(await exists("prod", "kube-system", source), false, "none in prod's either");
    const events = await waitFor(
      async () => {
        const items = await warningEvents(ns.name, "system");
        return items.length ? items : undefined;
      },
      "the Warning Event",
      HANG_GUARD_MS,
      200,
    );
    assert.equal(events[0].reason, "NamespaceNotAllowed");
    assert.match(events[0].message, /kube-system/);
    const system = JSON.parse(await kubectlOk("prod", ["get", "mirror", "system", "-n", ns.name, "-o", "json"]));
    assert.ok(!(system.metadata.finalizers ?? []).includes("operator-hub.dev/mirror-copies"), "no finalizer to clean");
  } finally {
    await hub.stop();
    await dropMirrorFinalizers(ns.name);
  }
});

Deno.test("--mirror-namespaces refuses a Mirror into a namespace it does not list, and creates no listed namespace that is missing", async () => {
  await using home = await testNamespace("mirror-reach-home", { contexts: CLUSTERS });
  await using allowed = await testNamespace("mirror-reach-allowed", { contexts: CLUSTERS });
  await using other = await testNamespace("mirror-reach-other", { contexts: CLUSTERS });
  const missing = randomName("mirror-reach-missing");
  const source = randomName("reach-source");
  await apply("prod", configMap(home.name, source));
  const hub = HubProcess.start({
    clusters: CLUSTERS,
    args: [
      "--operators",
      "mirror",
      "--home-cluster",
      "prod",
      "--namespace",
      home.name,
      "--mirror-namespaces",
      `${allowed.name},${missing}`,
    ],
  });
  try {
    await hub.waitReady(HANG_GUARD_MS);
    await apply(
      "prod",
      mirror(home.name, "allowed", source, allowed.name),
      mirror(home.name, "other", source, other.name),
      mirror(home.name, "missing", source, missing),
    );
    await waitFor(
      async () => (await mirrorStatus(home.name, "allowed"))?.targets?.[0]?.state === "InSync" || undefined,
      "the allowed Mirror in sync",
      HANG_GUARD_MS,
      200,
    );
    assert.ok(await exists("staging", allowed.name, source), "the listed namespace gets its copy");
    const refused = await waitFor(
      async () => {
        const s = await mirrorStatus(home.name, "other");
        return s?.state === "Error" ? s : undefined;
      },
      "the unlisted Mirror refused",
      HANG_GUARD_MS,
      200,
    );
    assert.equal(
      refused.message,
      `target namespace "${other.name}" is not allowed: --mirror-namespaces allows ${allowed.name}, ${missing}`,
    );
    assert.equal(await exists("staging", other.name, source), false, "nothing written into the unlisted namespace");
    const row = await waitFor(
      async () => {
        const s = await mirrorStatus(home.name, "missing");
        return s?.targets?.[0]?.lastError ? s.targets[0] : undefined;
      },
      "the missing namespace's row",
      HANG_GUARD_MS,
      200,
    );
    assert.notEqual(row.state, "InSync");
    assert.match(row.lastError, new RegExp(`namespace ${missing} does not exist in cluster staging`));
    const ns = await kubectl("staging", ["get", "namespace", missing]);
    assert.notEqual(ns.code, 0, "the missing namespace was not created");
  } finally {
    await hub.stop();
    await dropMirrorFinalizers(home.name);
  }
});

Deno.test("The Mirror's source watch caches only the sources, not 300 other ConfigMaps and 100 Secrets of their namespace", async () => {
  await using ns = await testNamespace("mirror-reach-cache", { contexts: CLUSTERS });
  const source = randomName("reach-source");
  const unrelated = [
    ...Array.from({ length: 300 }, (_, i) => configMap(ns.name, `unrelated-${i}`, { i: String(i) })),
    ...Array.from({ length: 100 }, (_, i) => ({
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: `unrelated-secret-${i}`, namespace: ns.name },
      stringData: { password: `p-${i}` },
    })),
  ];
  await apply("prod", configMap(ns.name, source), ...unrelated);
  const hub = HubProcess.start({
    clusters: CLUSTERS,
    args: ["--operators", "mirror", "--home-cluster", "prod", "--namespace", ns.name],
  });
  try {
    await hub.waitReady(HANG_GUARD_MS);
    await apply("prod", mirror(ns.name, "only", source));
    await waitFor(
      async () => (await mirrorStatus(ns.name, "only"))?.targets?.[0]?.state === "InSync" || undefined,
      "the Mirror in sync",
      HANG_GUARD_MS,
      200,
    );
    // The source's change reaches the copy through the source watch (not only the 60 s resync).
    await kubectlOk("prod", [
      "patch",
      "configmap",
      source,
      "-n",
      ns.name,
      "--type=merge",
      "-p",
      '{"data":{"key":"changed"}}',
    ]);
    await waitFor(
      async () => {
        const r = await kubectl("staging", ["get", "configmap", source, "-n", ns.name, "-o", "jsonpath={.data.key}"]);
        return r.stdout === "changed" || undefined;
      },
      "the change copied",
      20_000,
      200,
    );
    const status = await hub.waitStatus(
      (s) => s.clusters?.prod?.operators?.mirror?.watchedObjects !== undefined,
      HANG_GUARD_MS,
    );
    // prod holds the Mirror's source (1) and no copy (copies go to staging); staging holds its one copy.
    assert.equal(status.clusters.prod.operators.mirror.watchedObjects, 1, JSON.stringify(status.clusters.prod));
    assert.equal(status.clusters.prod.operators.mirror.objects, 1, "one Mirror");
  } finally {
    await hub.stop();
    await dropMirrorFinalizers(ns.name);
  }
});

Deno.test("The Mirror's source watch keeps no last-applied-configuration of a kubectl-applied Secret (its data) in the hub's cache", async () => {
  await using ns = await testNamespace("mirror-reach-applied", { contexts: ["prod"] });
  const secret = {
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name: "db", namespace: ns.name, annotations: { team: "payments" } },
    stringData: { password: "hunter2-applied" },
  };
  await kubectlOk("prod", ["apply", "-f", "-"], { stdin: JSON.stringify(secret) });
  const applied = JSON.parse(await kubectlOk("prod", ["get", "secret", "db", "-n", ns.name, "-o", "json"]));
  assert.match(applied.metadata.annotations[LAST_APPLIED_ANNOTATION], /hunter2-applied/, "kubectl kept the data there");
  const client = await localKubeClient("prod");
  const stop = new AbortController();
  const mirror: StoredObject = {
    metadata: { name: "m", namespace: ns.name },
    spec: { source: { kind: "Secret", name: "db" }, clusters: ["staging"] },
  };
  // The hub's own watch code with the Mirror operator's own watch declarations, against prod.
  const others = watchOtherResources(
    mirrorOperator({ homeCluster: "prod" }),
    {
      cluster: "prod",
      client,
      namespaces: [ns.name],
      clock: new SystemClock(),
      log: silentLogger(),
    },
    {
      cached: (c) => c === "prod" ? [mirror] : [],
      count: (c) => c === "prod" ? 1 : 0,
      queue: () => {},
      actingHere: () => [],
    },
    stop.signal,
  );
  try {
    const cached = await waitFor(
      () => others.watchers.map((w) => w.store.get(`${ns.name}/db`)).find(Boolean),
      "the source Secret in the watch's cache",
      HANG_GUARD_MS,
      50,
    );
    assert.equal(cached.metadata.annotations?.team, "payments", "other annotations are kept");
    assert.equal(LAST_APPLIED_ANNOTATION in (cached.metadata.annotations ?? {}), false);
    assert.doesNotMatch(JSON.stringify(cached), /hunter2-applied|managedFields/);
  } finally {
    stop.abort();
    await Promise.all(others.runs);
    client.close();
  }
});

// End-to-end: the example Greeting operator (examples/greeting_operator.ts, a user's own CRD) runs beside the
// built-in Uuid operator in one hub across prod, staging and dev; its CRD missing in one cluster shows only it
// `missing-crd` there.
// deno-lint-ignore-file no-explicit-any -- JSON from the hub and kubectl is checked by the test itself.

import assert from "node:assert/strict";
import { localApi, UUID_V4, waitFor } from "../dev/support/cluster_api.ts";
import { HubProcess } from "../dev/support/hub_process.ts";
import { applySharedCrd, kubectl, kubectlOk, testNamespace } from "./support/mod.ts";

const CLUSTERS = ["prod", "staging", "dev"];
const CRD_FILE = new URL("../examples/greeting_crd.yaml", import.meta.url).pathname;
const CRD_NAME = "greetings.examples.operator-hub.dev";
const ENTRY = "examples/run_greeting.ts";

async function installCrd(context: string): Promise<void> {
  await applySharedCrd(context, CRD_FILE);
  await kubectlOk(context, ["wait", "--for=condition=Established", `crd/${CRD_NAME}`, "--timeout=60s"]);
}

function manifests(namespace: string): string {
  const greeting = (name: string, who: string) =>
    `apiVersion: examples.operator-hub.dev/v1\nkind: Greeting\nmetadata:\n  name: ${name}\n  namespace: ${namespace}\n` +
    `spec:\n  name: ${who}\n`;
  const uuid = `apiVersion: demo.operator/v1\nkind: Uuid\nmetadata:\n  name: beside\n  namespace: ${namespace}\n`;
  return [greeting("hello-1", "Ada"), greeting("hello-2", "Grace"), uuid].join("---\n");
}

async function greetings(context: string, namespace: string): Promise<Record<string, string | undefined>> {
  const out = JSON.parse(await kubectlOk(context, ["get", "greetings", "-n", namespace, "-o", "json"]));
  return Object.fromEntries(out.items.map((g: any) => [g.metadata.name, g.status?.message]));
}

/** An operator's state in a health body: `/status` has `{state, ...}` per operator, the minimal probe bodies the bare state. */
function operatorState(body: any, cluster: string, operator: string): string | undefined {
  const entry = body?.clusters?.[cluster]?.operators?.[operator];
  return typeof entry === "string" ? entry : entry?.state;
}

Deno.test("The example Greeting operator reconciles in prod, staging and dev beside the Uuid operator, and its CRD deleted from dev shows greeting missing-crd there while uuid keeps watching and /readyz names dev", async () => {
  await Promise.all(CLUSTERS.map(installCrd));
  const ns = await testNamespace("sdk-example");
  const apis = CLUSTERS.map((c) => localApi(c));
  let hub = HubProcess.start({ clusters: CLUSTERS, entry: ENTRY, args: ["--namespace", ns.name] });
  try {
    await hub.waitReady();
    const status = (await hub.get("/status")).body;
    for (const c of CLUSTERS) {
      assert.deepEqual(Object.keys(status.clusters[c].operators).sort(), ["greeting", "mirror", "uuid"], c);
    }
    for (const c of CLUSTERS) await kubectlOk(c, ["apply", "-f", "-"], { stdin: manifests(ns.name) });
    for (const c of CLUSTERS) {
      await waitFor(
        async () => {
          const g = await greetings(c, ns.name);
          return g["hello-1"] === "Hello, Ada!" && g["hello-2"] === "Hello, Grace!" ? g : undefined;
        },
        `${c}: both Greetings answered`,
        60_000,
      );
    }
    for (const [i, c] of CLUSTERS.entries()) {
      const uuids = await waitFor(
        async () => {
          const m = await apis[i].uuidsOf(ns.name);
          return typeof m.get("beside") === "string" ? m : undefined;
        },
        `${c}: the Uuid beside the Greetings has a UUID`,
        60_000,
      );
      assert.match(uuids.get("beside") as string, UUID_V4);
    }
    const metrics = (await hub.get("/metrics")).text;
    for (const operator of ["greeting", "uuid"]) {
      assert.match(metrics, new RegExp(`controller_runtime_reconcile_total\\{controller="${operator}",cluster="dev"`));
    }

    // The CRD deleted at runtime: the Greeting watch in dev ends and its relist answers 404.
    await kubectlOk("dev", ["delete", "crd", CRD_NAME, "--wait=true", "--timeout=60s"]);
    const gone = await hub.waitStatus(
      (s) => operatorState(s, "dev", "greeting") === "missing-crd",
      60_000,
      "greeting missing-crd in dev",
    );
    assert.equal(operatorState(gone, "dev", "uuid"), "watching", JSON.stringify(gone.clusters.dev));
    assert.equal(gone.clusters.dev.state, "missing-crd", "a cluster's state is the worst of its operators'");
    for (const c of ["prod", "staging"]) {
      assert.equal(gone.clusters[c].state, "watching", `${c}: ${JSON.stringify(gone.clusters[c])}`);
      assert.equal(operatorState(gone, c, "greeting"), "watching", c);
    }
    assert.equal((await hub.get("/healthz")).status, 200, "a missing CRD is reported, not fatal");

    // A new hub while dev still lacks the CRD: dev never completes the greeting list, so it is not ready.
    await hub.stop("SIGTERM");
    hub = HubProcess.start({ clusters: CLUSTERS, entry: ENTRY, args: ["--namespace", ns.name] });
    await hub.waitStatus((s) => operatorState(s, "dev", "greeting") === "missing-crd", 60_000, "missing-crd at start");
    // Each cluster's lists finish in their own time: wait for all of them, then read the probe once.
    await hub.waitStatus(
      (s) =>
        ["prod", "staging"].every((c) => s.clusters[c].state === "watching") &&
        operatorState(s, "dev", "uuid") === "watching",
      60_000,
      "prod and staging watching, and uuid watching in dev",
    );
    const readyz = await hub.get("/readyz");
    assert.equal(readyz.status, 503, readyz.text);
    assert.deepEqual(readyz.body.notReady, ["dev"], readyz.text);
    assert.equal(operatorState(readyz.body, "dev", "greeting"), "missing-crd", readyz.text);
    assert.equal(operatorState(readyz.body, "dev", "uuid"), "watching", readyz.text);
  } finally {
    await hub.stop("SIGTERM");
    // Deleting the CRD deletes every Greeting with it.
    await Promise.all(
      CLUSTERS.map((c) => kubectl(c, ["delete", "crd", CRD_NAME, "--ignore-not-found", "--wait=false"])),
    );
    await Promise.all(CLUSTERS.map((c) => kubectl(c, ["delete", "uuid", "--all", "-n", ns.name, "--wait=false"])));
    for (const a of apis) a.close();
    await ns.cleanup();
  }
});

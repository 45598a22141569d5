// End-to-end: `operator-hub cleanup` and `--cleanup-on-remove` remove the hub's finalizers (and only those) from the
// local prod and staging apiservers, so namespaces with Uuids and Mirrors delete fully once the hub is gone.

import assert from "node:assert/strict";
import { localEndpoint, waitFor } from "../dev/support/cluster_api.ts";
import { freePort, HubProcess, runHubCli } from "../dev/support/hub_process.ts";
import { KUBECONFIG_PATH, kubeconfigText, kubectl, kubectlOk, tempDir, testNamespace } from "./support/mod.ts";

/** Hang guard: a local hub adds a finalizer within a second or two; 60 s is far above any run seen. */
const HANG_GUARD_MS = 60_000;
/** The namespace controller of the local clusters deletes a small namespace in 5–9 s under load; 120 s is a guard. */
const NAMESPACE_GONE_MS = 120_000;
const HANDLERS = "operator-hub.dev/handlers";
const MIRROR = "operator-hub.dev/mirror-copies";
const FOREIGN = "example.com/keep";
const LIFECYCLE = "examples/kopf_lifecycle.ts";

function uuid(namespace: string, name: string) {
  return { apiVersion: "demo.operator/v1", kind: "Uuid", metadata: { name, namespace }, spec: {} };
}

async function apply(context: string, ...objects: unknown[]): Promise<void> {
  const list = { apiVersion: "v1", kind: "List", items: objects };
  await kubectlOk(context, ["apply", "-f", "-"], { stdin: JSON.stringify(list) });
}

async function finalizers(context: string, resource: string, namespace: string, name: string): Promise<string[]> {
  const out = await kubectlOk(context, ["get", resource, name, "-n", namespace, "-o", "json"]);
  return JSON.parse(out).metadata.finalizers ?? [];
}

async function waitFinalizer(context: string, resource: string, namespace: string, name: string, f: string) {
  await waitFor(
    async () => (await finalizers(context, resource, namespace, name)).includes(f) || undefined,
    `${f} on ${context} ${resource} ${namespace}/${name}`,
    HANG_GUARD_MS,
    200,
  );
}

async function namespaceGone(context: string, name: string): Promise<void> {
  await waitFor(
    async () => {
      const r = await kubectl(context, ["get", "namespace", name, "-o", "name"]);
      if (r.code === 0) return undefined;
      if (/NotFound|not found/.test(r.stderr)) return true;
      throw new Error(r.stderr);
    },
    `namespace ${name} gone from ${context}`,
    NAMESPACE_GONE_MS,
    500,
  );
}

Deno.test("operator-hub cleanup removes only the hub's finalizers, reports an unreachable cluster with exit 1, and the namespaces then delete fully", async () => {
  await using ns = await testNamespace("cleanup-cli", { contexts: ["prod", "staging"] });
  await using dir = await tempDir("cleanup-cli");
  await apply("prod", {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: "settings", namespace: ns.name },
    data: { a: "1" },
  });
  const hub = HubProcess.start({
    clusters: ["prod", "staging"],
    args: ["--operators", "mirror", "--home-cluster", "prod", "--namespace", ns.name, LIFECYCLE],
  });
  try {
    await hub.waitReady(HANG_GUARD_MS);
    await apply("prod", uuid(ns.name, "a"), uuid(ns.name, "b"), {
      apiVersion: "demo.operator/v1",
      kind: "Mirror",
      metadata: { name: "copy", namespace: ns.name },
      spec: { source: { kind: "ConfigMap", name: "settings" }, clusters: ["staging"] },
    });
    await apply("staging", uuid(ns.name, "c"));
    await waitFinalizer("prod", "uuid", ns.name, "a", HANDLERS);
    await waitFinalizer("prod", "uuid", ns.name, "b", HANDLERS);
    await waitFinalizer("staging", "uuid", ns.name, "c", HANDLERS);
    await waitFinalizer("prod", "mirror", ns.name, "copy", MIRROR);
    // Another controller's finalizer, beside the hub's: cleanup must leave it.
    const b = await finalizers("prod", "uuid", ns.name, "b");
    await kubectlOk("prod", [
      "patch",
      "uuid",
      "b",
      "-n",
      ns.name,
      "--type=merge",
      "-p",
      JSON.stringify({ metadata: { finalizers: [FOREIGN, ...b] } }),
    ]);
  } finally {
    await hub.stop();
  }
  // A third cluster nobody answers for: reported, and the others are cleaned all the same.
  const prod = localEndpoint("prod");
  const gone = await dir.write(
    "gone.yaml",
    kubeconfigText([{
      name: "gone",
      server: `https://127.0.0.1:${freePort()}`,
      caPem: prod.caPem,
      user: { token: "x" },
    }]),
  );
  const run = await runHubCli([
    "cleanup",
    "--kubeconfig",
    KUBECONFIG_PATH,
    "--kubeconfig",
    gone,
    "--clusters",
    "prod,staging,gone",
    "--namespace",
    ns.name,
    LIFECYCLE,
  ]);
  assert.equal(run.code, 1, `${run.stdout}\n${run.stderr}`);
  const lines = run.stdout.trim().split("\n");
  assert.equal(lines.length, 3, run.stdout);
  assert.match(lines[0], /^gone: removed 0 finalizers from 0 objects; failed: /);
  assert.equal(lines[1], "prod: removed 3 finalizers from 3 objects");
  assert.equal(lines[2], "staging: removed 1 finalizer from 1 object");
  assert.deepEqual(await finalizers("prod", "uuid", ns.name, "b"), [FOREIGN], "the other finalizer stays");
  assert.deepEqual(await finalizers("prod", "uuid", ns.name, "a"), []);
  assert.deepEqual(await finalizers("prod", "mirror", ns.name, "copy"), []);
  await kubectlOk("prod", [
    "patch",
    "uuid",
    "b",
    "-n",
    ns.name,
    "--type=merge",
    "-p",
    '{"metadata":{"finalizers":null}}',
  ]);
  for (const context of ["prod", "staging"]) {
    await kubectlOk(context, ["delete", "namespace", ns.name, "--wait=false"]);
  }
  await Promise.all([namespaceGone("prod", ns.name), namespaceGone("staging", ns.name)]);
  const again = await runHubCli([
    "cleanup",
    "--kubeconfig",
    KUBECONFIG_PATH,
    "--clusters",
    "prod",
    "--namespace",
    ns.name,
  ]);
  assert.equal(again.code, 0, again.stderr);
  assert.equal(again.stdout.trim(), "prod: removed 0 finalizers from 0 objects");
});

Deno.test("--cleanup-on-remove removes the hub's finalizers from a cluster whose kubeconfig file leaves the cluster folder", async () => {
  await using ns = await testNamespace("cleanup-on-remove", { contexts: ["prod", "staging"] });
  await using dir = await tempDir("cleanup-on-remove");
  await Deno.mkdir(`${dir.path}/clusters`);
  const staging = localEndpoint("staging");
  // staging, registered under another name by a file dropped into the folder (untrusted: inline credentials only).
  const dropped = kubeconfigText([{
    name: "dropped",
    server: staging.server,
    caPem: staging.caPem,
    user: { token: staging.token },
  }]);
  await dir.write("clusters/dropped.yaml", dropped);
  const prod = localEndpoint("prod");
  const own = await dir.write(
    "prod.yaml",
    kubeconfigText([{ name: "prod", server: prod.server, caPem: prod.caPem, user: { token: prod.token } }]),
  );
  const hub = HubProcess.start({
    clusters: ["all"],
    kubeconfigs: [own],
    args: [
      "--cluster-dir",
      `${dir.path}/clusters`,
      "--cleanup-on-remove",
      "--operators",
      "none",
      "--namespace",
      ns.name,
      LIFECYCLE,
    ],
  });
  try {
    await hub.waitStatus(
      (s) => s.clusters?.dropped?.operators?.["uuid-lifecycle"]?.state === "watching",
      HANG_GUARD_MS,
    );
    await apply("staging", uuid(ns.name, "held"));
    await apply("prod", uuid(ns.name, "home"));
    await waitFinalizer("staging", "uuid", ns.name, "held", HANDLERS);
    await waitFinalizer("prod", "uuid", ns.name, "home", HANDLERS);
    await Deno.remove(`${dir.path}/clusters/dropped.yaml`);
    await waitFor(
      async () => (await finalizers("staging", "uuid", ns.name, "held")).length === 0 || undefined,
      "the removed cluster's finalizer gone",
      HANG_GUARD_MS,
      200,
    );
    await hub.waitStatus((s) => s.clusters?.dropped === undefined, HANG_GUARD_MS, "the cluster disengaged");
    assert.ok(
      hub.logs.some((l) =>
        l.includes("finalizers removed from a removed cluster") && l.includes('"cluster":"dropped"')
      ),
      hub.tail(),
    );
    assert.deepEqual(
      await finalizers("prod", "uuid", ns.name, "home"),
      [HANDLERS],
      "the clusters still served keep theirs",
    );
  } finally {
    await hub.stop();
    await runHubCli(["cleanup", "--kubeconfig", KUBECONFIG_PATH, "--clusters", "prod", "--namespace", ns.name]);
  }
});

// The kube-controller-manager beside each local apiserver does what a kind cluster's does: namespaces are deleted,
// owned objects are garbage-collected, ServiceAccounts and the root CA ConfigMap appear, and Deployments get
// ReplicaSets. Each test works in namespaces of its own, so the file runs in the parallel group; killing a controller
// manager, which every file would feel, is dev/clusters/controller_manager_test.ts (serial).

import assert from "node:assert/strict";
import { kubectl, kubectlOk, requireClusters } from "../support/mod.ts";
import { controllerManagerRecord, DISABLED_CONTROLLERS, readStateSync } from "./clusters.ts";
import { CONTROLLER_MANAGER_USER } from "./_controller_manager.ts";
import { setTimeout as sleep } from "node:timers/promises";

/** Hang guard for each wait below: many times what the controllers take on a loaded 2-core machine. */
const HANG_GUARD_MS = 90_000;

function randomName(prefix: string): string {
  return `${prefix}-${crypto.randomUUID().slice(0, 8)}`;
}

/** Polls `check` every 200 ms until it returns true; fails naming `what` after the hang guard. */
async function eventually(what: string, check: () => Promise<boolean>): Promise<void> {
  const deadline = performance.now() + HANG_GUARD_MS;
  while (!(await check())) {
    if (performance.now() > deadline) assert.fail(`${what} did not happen within the ${HANG_GUARD_MS / 1000}s guard`);
    await sleep(200);
  }
}

async function gone(context: string, args: string[]): Promise<boolean> {
  const result = await kubectl(context, ["get", ...args, "-o", "name"]);
  if (result.code === 0) return false;
  assert.match(result.stderr, /NotFound|not found/, `kubectl get ${args.join(" ")} failed otherwise: ${result.stderr}`);
  return true;
}

for (const context of requireClusters().names) {
  Deno.test(`kubectl delete namespace completes in ${context}, and a ConfigMap owned by another is collected after its owner is deleted`, async () => {
    const ns = randomName("kcm-gc");
    await kubectlOk(context, ["create", "namespace", ns]);
    try {
      await kubectlOk(context, ["-n", ns, "create", "configmap", "owner", "--from-literal=role=owner"]);
      const uid = (await kubectlOk(context, ["-n", ns, "get", "configmap", "owner", "-o", "jsonpath={.metadata.uid}"]))
        .trim();
      assert.match(uid, /^[0-9a-f-]{36}$/);
      const dependent = {
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: {
          name: "dependent",
          namespace: ns,
          ownerReferences: [{ apiVersion: "v1", kind: "ConfigMap", name: "owner", uid }],
        },
        data: { role: "dependent" },
      };
      await kubectlOk(context, ["create", "-f", "-"], { stdin: JSON.stringify(dependent) });
      // An unowned ConfigMap beside it must survive: the collector removes dependents only.
      await kubectlOk(context, ["-n", ns, "create", "configmap", "bystander"]);

      await kubectlOk(context, ["-n", ns, "delete", "configmap", "owner"]);
      await eventually(
        `garbage collection of ${ns}/dependent in ${context}`,
        () => gone(context, ["-n", ns, "configmap", "dependent"]),
      );
      assert.equal(await gone(context, ["-n", ns, "configmap", "bystander"]), false);
    } finally {
      // The command a user types: it waits until the namespace is really gone (its default), or fails.
      const deleted = await kubectl(context, ["delete", "namespace", ns, "--timeout=90s"]);
      assert.equal(deleted.code, 0, `kubectl delete namespace ${ns} in ${context} failed: ${deleted.stderr}`);
    }
    assert.equal(await gone(context, ["namespace", ns]), true, `namespace ${ns} still exists in ${context}`);
  });
}

Deno.test("every new namespace gets its default ServiceAccount and the kube-root-ca.crt ConfigMap, and a Deployment gets a ReplicaSet and Pending Pods", async () => {
  const contexts = requireClusters().names;
  const ns = randomName("kcm-workloads");
  await Promise.all(contexts.map((c) => kubectlOk(c, ["create", "namespace", ns])));
  try {
    await Promise.all(contexts.map(async (context) => {
      await eventually(
        `ServiceAccount ${ns}/default in ${context}`,
        async () => !(await gone(context, ["-n", ns, "serviceaccount", "default"])),
      );
      await eventually(
        `ConfigMap ${ns}/kube-root-ca.crt in ${context}`,
        async () => !(await gone(context, ["-n", ns, "configmap", "kube-root-ca.crt"])),
      );
      const ca = await kubectlOk(context, [
        "-n",
        ns,
        "get",
        "configmap",
        "kube-root-ca.crt",
        "-o",
        "jsonpath={.data.ca\\.crt}",
      ]);
      assert.match(ca, /-----BEGIN CERTIFICATE-----/);

      await kubectlOk(context, [
        "-n",
        ns,
        "create",
        "deployment",
        "web",
        "--image=registry.invalid/web:1",
        "--replicas=2",
      ]);
      await eventually(`a ReplicaSet with 2 Pods for Deployment ${ns}/web in ${context}`, async () => {
        const pods = await kubectlOk(context, ["-n", ns, "get", "pods", "-l", "app=web", "-o", "json"]);
        const items = (JSON.parse(pods) as { items: { status?: { phase?: string } }[] }).items;
        return items.length === 2;
      });
      const pods = JSON.parse(await kubectlOk(context, ["-n", ns, "get", "pods", "-l", "app=web", "-o", "json"])) as {
        items: { status?: { phase?: string }; metadata: { ownerReferences?: { kind: string }[] } }[];
      };
      for (const pod of pods.items) {
        assert.equal(pod.status?.phase, "Pending", "no node runs pods in the local clusters");
        assert.deepEqual(pod.metadata.ownerReferences?.map((o) => o.kind), ["ReplicaSet"]);
      }
    }));
  } finally {
    await Promise.all(contexts.map((c) => kubectlOk(c, ["delete", "namespace", ns, "--timeout=90s"])));
  }
});

Deno.test("each controller manager authenticates as system:kube-controller-manager with a client certificate, runs without leader election, and leaves the node controllers off", async () => {
  const state = readStateSync();
  assert.ok(state, "no cluster state");
  for (const name of requireClusters().names) {
    const manager = controllerManagerRecord(state, name);
    const whoami = new Deno.Command("kubectl", {
      args: [`--kubeconfig=${manager.kubeconfig}`, "auth", "whoami", "-o", "jsonpath={.status.userInfo.username}"],
      stdout: "piped",
      stderr: "piped",
    });
    const out = await whoami.output();
    assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
    assert.equal(new TextDecoder().decode(out.stdout), CONTROLLER_MANAGER_USER);
    assert.match(await Deno.readTextFile(manager.kubeconfig), /client-certificate: /);
    assert.doesNotMatch(await Deno.readTextFile(manager.kubeconfig), /token:/);

    const argv = Deno.readTextFileSync(`/proc/${manager.pid}/cmdline`).split("\0");
    assert.ok(argv.includes("--leader-elect=false"), argv.join(" "));
    assert.ok(argv.includes("--use-service-account-credentials=true"), argv.join(" "));
    const controllers = argv.find((a) => a.startsWith("--controllers="))!.slice("--controllers=".length).split(",");
    assert.equal(controllers[0], "*");
    assert.ok(controllers.includes("-daemonset-controller"));
    assert.deepEqual(controllers.slice(1), DISABLED_CONTROLLERS.map((c) => `-${c}`));
  }
});

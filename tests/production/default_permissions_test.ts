// Least privilege of what we ship, asked back from a real API server after a real apply: the default install (kustomize
// deploy/ and the chart's defaults) reads no Secret cluster-wide; the Mirror operator's rights are Roles in the listed
// namespaces only; the chart's uninstall hook may patch Uuids and Mirrors and nothing else.
// deno-lint-ignore-file no-explicit-any -- rendered manifests are checked field by field.

import assert from "node:assert/strict";
import { relative } from "node:path";
import YAML from "yaml";
import { kubectl, kubectlOk, requireClusters, testNamespace } from "../support/mod.ts";
import { clusterFlags, helmTemplate, objectKeys } from "./_helm.ts";
import { HubProcess } from "../../dev/support/hub_process.ts";
import { applyDeployRbac, canI, kustomize, remoteKubeconfig, ROOT } from "./_support.ts";

const CONTEXT = "prod";
const RBAC_KINDS = new Set(["ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"]);
const isHook = (d: any) => d.metadata.annotations?.["helm.sh/hook"] !== undefined;

/** Applies the rendered RBAC objects for real (hooks left out unless `hooks`); returns the cluster-scoped ones. */
async function applyRbac(context: string, docs: any[], options: { hooks?: boolean } = {}): Promise<string[]> {
  const rbac = docs.filter((d) => RBAC_KINDS.has(d.kind) && isHook(d) === (options.hooks ?? false));
  await kubectlOk(context, ["apply", "-f", "-"], { stdin: rbac.map((d) => YAML.stringify(d)).join("---\n") });
  return rbac.filter((d) => d.kind.startsWith("Cluster")).map((d) => `${d.kind.toLowerCase()}/${d.metadata.name}`);
}

/** Asks every question; returns the ones answered otherwise than expected (empty when all match). */
async function wrongAnswers(
  context: string,
  user: string,
  questions: [boolean, string, string, string?][],
): Promise<string[]> {
  const answers = await Promise.all(questions.map(([, verb, res, ns]) => canI(context, user, verb, res, ns)));
  return questions.flatMap(([want, verb, res, ns], i) =>
    answers[i] === want ? [] : [`${want ? "may not" : "may"} ${verb} ${res} ${ns ? `-n ${ns}` : "-A"}`]
  );
}

Deno.test("The chart's defaults, applied to a real API server, let its ServiceAccount list Uuids everywhere but answer no to `kubectl auth can-i list secrets -A`; with mirror.enabled and mirror.namespaces=[a] it may list Secrets in a but not in b nor -A, and a hub with those rights runs both operators green", async () => {
  requireClusters();
  await using ns = await testNamespace("perm-helm", { contexts: [CONTEXT] });
  await using a = await testNamespace("perm-a", { contexts: [CONTEXT] });
  await using b = await testNamespace("perm-b", { contexts: [CONTEXT] });
  const release = `perm-${ns.name.split("-").pop()}`;
  const user = `system:serviceaccount:${ns.name}:${release}-operator-hub`;
  const clusterScoped = new Set<string>();
  try {
    const defaults = await helmTemplate(release, ns.name, ["--set", "crds.install=false"]);
    for (const o of await applyRbac(CONTEXT, defaults)) clusterScoped.add(o);
    assert.deepEqual(
      await wrongAnswers(CONTEXT, user, [
        // Positive controls: the binding is live, so the noes below are RBAC's answer, not a missing subject.
        [true, "list", "uuid.demo.operator"],
        [true, "patch", "uuid.demo.operator/status", a.name],
        [false, "list", "secrets"],
        [false, "get", "secrets", a.name],
        [false, "list", "secrets", ns.name],
        [false, "list", "configmaps"],
        [false, "patch", "configmaps", a.name],
        [false, "create", "namespaces"],
        [false, "patch", "mirrors.demo.operator", a.name],
      ]),
      [],
    );

    const mirror = await helmTemplate(release, ns.name, [
      "--set",
      "crds.install=false",
      "--set",
      "mirror.enabled=true",
      "--set",
      `mirror.namespaces={${a.name}}`,
    ]);
    // The Mirror operator adds exactly a ClusterRole on its own CRD and a Role in each listed namespace.
    assert.deepEqual(objectKeys(mirror).filter((k) => !objectKeys(defaults).includes(k)), [
      `ClusterRole/${release}-operator-hub-mirror`,
      `ClusterRoleBinding/${release}-operator-hub-mirror`,
      `Role/${a.name}/${release}-operator-hub-mirror`,
      `RoleBinding/${a.name}/${release}-operator-hub-mirror`,
    ]);
    for (const o of await applyRbac(CONTEXT, mirror)) clusterScoped.add(o);
    assert.deepEqual(
      await wrongAnswers(CONTEXT, user, [
        [true, "list", "secrets", a.name],
        [true, "watch", "configmaps", a.name],
        [true, "patch", "secrets", a.name],
        [true, "delete", "configmaps", a.name],
        [true, "patch", "mirrors.demo.operator/status", b.name],
        [false, "list", "secrets", b.name],
        [false, "get", "secrets", "kube-system"],
        [false, "create", "configmaps", b.name],
        [false, "list", "secrets"],
        [false, "list", "configmaps"],
        [false, "update", "secrets", a.name],
        [false, "create", "namespaces"],
        [false, "delete", "mirrors.demo.operator", a.name],
      ]),
      [],
    );
    // Enough for a real hub: as that ServiceAccount, with the chart's operator flags, both operators' pre-flights pass
    // and they watch namespace a (--namespace a keeps its Uuid watch off the other tests' namespaces).
    const token = (await kubectlOk(CONTEXT, ["create", "token", `${release}-operator-hub`, "-n", ns.name])).trim();
    const dir = await Deno.makeTempDir({ prefix: "operator-hub-perm-" });
    const hubArgs: string[] = mirror.find((d) => d.kind === "Deployment").spec.template.spec.containers[0].args;
    Deno.writeTextFileSync(`${dir}/home.yaml`, remoteKubeconfig(CONTEXT, token, "home"));
    const hub = HubProcess.start({
      clusters: ["home"],
      kubeconfigs: [`${dir}/home.yaml`],
      args: [...hubArgs.filter((x) => /^--(operators|mirror-namespaces)=/.test(x)), "--namespace", a.name],
    });
    try {
      const status = await hub.waitStatus(
        (st) => ["watching", "forbidden"].includes(st.clusters?.home?.state),
        60_000,
        "home watching or forbidden",
      );
      const home = status.clusters.home;
      assert.deepEqual(Object.keys(home.operators).sort(), ["mirror", "uuid"]);
      assert.deepEqual(home.missingPermissions, [], home.lastError ?? "");
      assert.equal(home.state, "watching");
    } finally {
      await hub.kill();
      await Deno.remove(dir, { recursive: true });
    }
  } finally {
    for (const o of clusterScoped) await kubectl(CONTEXT, ["delete", o, "--ignore-not-found"]);
  }
});

Deno.test("deploy/'s mirror component turns on the Mirror operator with --mirror-namespaces and a ClusterRole on Mirrors only, and deploy/mirror/namespace applied in namespace a lets the hub's ServiceAccount list Secrets in a but not in b nor -A", async () => {
  // kustomize loads components by a path relative to the overlay, never an absolute one.
  const overlay = await Deno.makeTempDir({ prefix: "operator-hub-mirror-overlay-" });
  try {
    Deno.writeTextFileSync(
      `${overlay}/kustomization.yaml`,
      YAML.stringify({
        apiVersion: "kustomize.config.k8s.io/v1beta1",
        kind: "Kustomization",
        resources: [relative(overlay, `${ROOT}deploy`)],
        components: [relative(overlay, `${ROOT}deploy/mirror`)],
      }),
    );
    const base = await kustomize("deploy");
    const withMirror = await kustomize(relative(ROOT, overlay));
    assert.deepEqual(objectKeys(withMirror).filter((k) => !objectKeys(base).includes(k)), [
      "ClusterRole/operator-hub-mirror",
      "ClusterRoleBinding/operator-hub-mirror",
    ]);
    const role = withMirror.find((d) => d.kind === "ClusterRole" && d.metadata.name === "operator-hub-mirror");
    assert.deepEqual(role.rules.flatMap((r: any) => r.resources).sort(), ["mirrors", "mirrors/status"]);
    const args: string[] = withMirror.find((d) => d.kind === "Deployment").spec.template.spec.containers[0].args;
    assert.deepEqual(args.filter((x) => /^--(operators|mirror-namespaces)/.test(x)), [
      "--operators=uuid,mirror",
      "--mirror-namespaces=mirrored",
    ]);
  } finally {
    await Deno.remove(overlay, { recursive: true });
  }

  requireClusters();
  const context = "dev";
  await using a = await testNamespace("perm-kust-a", { contexts: [context] });
  await using b = await testNamespace("perm-kust-b", { contexts: [context] });
  await applyDeployRbac(context);
  const user = "system:serviceaccount:operator-hub:operator-hub";
  assert.deepEqual(await wrongAnswers(context, user, [[false, "list", "secrets", a.name]]), [], "before the Role");
  await kubectlOk(context, ["apply", "-n", a.name, "-k", `${ROOT}deploy/mirror/namespace`]);
  assert.deepEqual(
    await wrongAnswers(context, user, [
      [true, "list", "secrets", a.name],
      [true, "create", "configmaps", a.name],
      [false, "list", "secrets", b.name],
      [false, "list", "secrets"],
      [false, "list", "configmaps"],
      [false, "create", "namespaces"],
    ]),
    [],
  );
});

Deno.test("The chart's pre-delete hook runs `operator-hub cleanup` with the Deployment's cluster flags as a ServiceAccount that, after a real apply, may get, list and patch Uuids and Mirrors and nothing else, and is deleted once it succeeded", async () => {
  requireClusters();
  await using ns = await testNamespace("perm-hook", { contexts: [CONTEXT] });
  const release = `hook-${ns.name.split("-").pop()}`;
  const clusterScoped: string[] = [];
  try {
    const docs = await helmTemplate(release, ns.name, [
      "--set",
      "crds.install=false",
      "--set",
      `clusterSecrets.namespace=${ns.name}`,
      "--set",
      `namespaces={${ns.name}}`,
      "--set",
      "clusters={in-cluster,all}",
    ]);
    const hooks = docs.filter(isHook);
    assert.deepEqual(objectKeys(hooks), [
      `ClusterRole/${release}-operator-hub-cleanup`,
      `ClusterRoleBinding/${release}-operator-hub-cleanup`,
      `Job/${ns.name}/${release}-operator-hub-cleanup`,
      `Role/${ns.name}/${release}-operator-hub-cleanup`,
      `RoleBinding/${ns.name}/${release}-operator-hub-cleanup`,
      `ServiceAccount/${ns.name}/${release}-operator-hub-cleanup`,
    ]);
    for (const h of hooks) {
      const an = h.metadata.annotations;
      assert.equal(an["helm.sh/hook"], "pre-delete", `${h.kind} runs on uninstall only`);
      assert.deepEqual(an["helm.sh/hook-delete-policy"].split(","), ["before-hook-creation", "hook-succeeded"]);
      // The RBAC exists before the Job starts.
      assert.ok(Number(an["helm.sh/hook-weight"]) < 0 === (h.kind !== "Job"), `${h.kind} weight`);
    }
    const job = hooks.find((d) => d.kind === "Job");
    const pod = job.spec.template.spec;
    assert.equal(pod.serviceAccountName, `${release}-operator-hub-cleanup`);
    assert.equal(pod.restartPolicy, "Never");
    const deployment = docs.find((d) => d.kind === "Deployment").spec.template.spec;
    assert.equal(pod.containers[0].image, deployment.containers[0].image);
    const jobArgs: string[] = pod.containers[0].args;
    const hubArgs: string[] = deployment.containers[0].args;
    assert.equal(jobArgs[0], "cleanup");
    assert.deepEqual(clusterFlags(jobArgs), clusterFlags(hubArgs));
    assert.deepEqual(clusterFlags(jobArgs), [
      "--clusters",
      "in-cluster,all",
      "--namespace",
      ns.name,
      "--cluster-secrets",
      ns.name,
    ]);
    // The same kubeconfig folder as the hub, so the same clusters are engaged.
    assert.deepEqual(pod.volumes.find((v: any) => v.name === "kubeconfigs"), deployment.volumes[0]);
    assert.equal(
      (await helmTemplate(release, ns.name, ["--set", "cleanup.enabled=false"])).filter(isHook).length,
      0,
      "cleanup.enabled=false renders no hook",
    );

    clusterScoped.push(...await applyRbac(CONTEXT, docs, { hooks: true }));
    const user = `system:serviceaccount:${ns.name}:${release}-operator-hub-cleanup`;
    assert.deepEqual(
      await wrongAnswers(CONTEXT, user, [
        [true, "list", "uuid.demo.operator"],
        [true, "patch", "uuid.demo.operator", "some-namespace"],
        [true, "patch", "mirrors.demo.operator", "some-namespace"],
        [true, "list", "secrets", ns.name],
        [false, "update", "uuid.demo.operator", "some-namespace"],
        [false, "delete", "uuid.demo.operator", "some-namespace"],
        [false, "delete", "mirrors.demo.operator", "some-namespace"],
        [false, "patch", "uuid.demo.operator/status", "some-namespace"],
        [false, "list", "secrets"],
        [false, "get", "secrets", "kube-system"],
        [false, "create", "pods", ns.name],
        [false, "patch", "configmaps", "some-namespace"],
      ]),
      [],
    );
  } finally {
    for (const o of clusterScoped) await kubectl(CONTEXT, ["delete", o, "--ignore-not-found"]);
  }
});

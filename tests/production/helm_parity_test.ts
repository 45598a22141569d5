// kustomize's deploy/ and the Helm chart render the same objects (labels and selectors aside), and the chart's
// pre-delete hook is deploy/cleanup/ with the Deployment's cluster flags.
// deno-lint-ignore-file no-explicit-any -- rendered manifests are checked field by field.

import assert from "node:assert/strict";
import { argsOf, CHART_DIR, clusterFlags, helmTemplate, objectKeys, only } from "./_helm.ts";
import { kustomize, readYamlDocs, ROOT } from "./_support.ts";

/**
 * What legitimately differs between kustomize's and Helm's objects, removed before comparing:
 * - metadata.labels: Helm adds app.kubernetes.io/instance, version, managed-by and helm.sh/chart (checked to contain
 *   kustomize's labels first); metadata.annotations: Helm's helm.sh/resource-policy on the CRD;
 * - the Deployment's selector and pod labels, and the Service's selector: Helm's add app.kubernetes.io/instance, so
 *   two releases never select each other's pods (checked to contain kustomize's first).
 */
function normalize(helmDoc: any, kustomizeDoc: any): [any, any] {
  const [h, k] = [structuredClone(helmDoc), structuredClone(kustomizeDoc)];
  const contains = (
    outer: Record<string, string> | undefined,
    inner: Record<string, string> | undefined,
    where: string,
  ) => {
    for (const [key, value] of Object.entries(inner ?? {})) {
      assert.equal(outer?.[key], value, `${k.kind} ${k.metadata.name}: Helm's ${where} keep ${key}=${value}`);
    }
  };
  contains(h.metadata.labels, k.metadata.labels, "labels");
  for (const d of [h, k]) {
    delete d.metadata.labels;
    delete d.metadata.annotations;
  }
  if (k.kind === "Deployment") {
    contains(h.spec.selector.matchLabels, k.spec.selector.matchLabels, "selector");
    contains(h.spec.template.metadata.labels, k.spec.template.metadata.labels, "pod labels");
    for (const d of [h, k]) {
      delete d.spec.selector;
      delete d.spec.template.metadata.labels;
    }
  }
  if (k.kind === "Job") {
    contains(h.spec.template.metadata.labels, k.spec.template.metadata.labels, "pod labels");
    for (const d of [h, k]) delete d.spec.template.metadata.labels;
  }
  if (k.kind === "Service") {
    contains(h.spec.selector, k.spec.selector, "selector");
    for (const d of [h, k]) delete d.spec.selector;
  }
  return [h, k];
}

Deno.test("kustomize's deploy/ and the chart (release operator-hub, clusterSecrets.namespace=operator-hub) render the same Deployment, ClusterRoles, Roles, bindings, ServiceAccount, Service and CRD, and the chart's pre-delete hook is deploy/cleanup/ with the Deployment's cluster flags", async () => {
  const k = await kustomize("deploy");
  const rendered = await helmTemplate("operator-hub", "operator-hub", [
    "--set",
    "clusterSecrets.namespace=operator-hub",
  ]);
  // The chart's pre-delete hook is deploy/cleanup/ (applied by hand before `kubectl delete -k deploy/`): compared below.
  const isHook = (d: any) => d.metadata.annotations?.["helm.sh/hook"] !== undefined;
  const h = rendered.filter((d) => !isHook(d));
  // The one kind only kustomize renders: Helm installs into a namespace it does not own (`--create-namespace`).
  assert.deepEqual(objectKeys(k).filter((key) => !objectKeys(h).includes(key)), ["Namespace/operator-hub"]);
  assert.deepEqual(objectKeys(h).filter((key) => !objectKeys(k).includes(key)), []);
  for (const kind of ["ClusterRole", "Role"]) {
    assert.ok(k.filter((d) => d.kind === kind).length >= 2, `kustomize renders ${kind}s to compare`);
  }
  for (const kd of k.filter((d) => d.kind !== "Namespace")) {
    const hd = only(h, kd.kind, kd.metadata.name);
    const [hn, kn] = normalize(hd, kd);
    if (kd.kind === "ClusterRole" || kd.kind === "Role") {
      assert.equal(hn.rules.length, kn.rules.length, `${kd.kind} ${kd.metadata.name}: number of rules`);
      kn.rules.forEach((rule: any, i: number) => {
        assert.deepEqual(hn.rules[i], rule, `${kd.kind} ${kd.metadata.name}: rule ${i}`);
      });
    }
    assert.deepEqual(hn, kn, `${kd.kind} ${kd.metadata.name}`);
  }
  // The chart's CRDs are crds/uuid.yaml and crds/mirror.yaml (labels aside, checked above), and files/ holds
  // byte-exact copies.
  for (const [name, file] of [["uuid.demo.operator", "uuid"], ["mirrors.demo.operator", "mirror"]]) {
    assert.deepEqual(only(h, "CustomResourceDefinition", name).spec, readYamlDocs(`crds/${file}.yaml`)[0].spec);
    assert.equal(
      Deno.readTextFileSync(`${CHART_DIR}/files/${file}-crd.yaml`),
      Deno.readTextFileSync(`${ROOT}crds/${file}.yaml`),
    );
  }
  // With the defaults the Secret provider is off: no Role for Secrets and no --cluster-secrets, nothing else differs.
  const defaults = await helmTemplate("operator-hub", "operator-hub");
  assert.deepEqual(
    objectKeys(h).filter((key) => !objectKeys(defaults).includes(key)),
    ["Role/operator-hub/operator-hub-cluster-secrets", "RoleBinding/operator-hub/operator-hub-cluster-secrets"],
  );
  assert.deepEqual(argsOf(h), [...argsOf(defaults), "--cluster-secrets", "operator-hub"]);
  // The uninstall step: the chart's pre-delete hook objects are deploy/cleanup/'s, and the Job's cluster flags are the
  // Deployment's.
  const hooks = rendered.filter(isHook);
  const cleanup = await kustomize("deploy/cleanup");
  assert.deepEqual(objectKeys(hooks), objectKeys(cleanup));
  for (const kd of cleanup) {
    const [hn, kn] = normalize(only(hooks, kd.kind, kd.metadata.name), kd);
    assert.deepEqual(hn, kn, `deploy/cleanup ${kd.kind} ${kd.metadata.name}`);
  }
  const jobArgs: string[] = only(cleanup, "Job").spec.template.spec.containers[0].args;
  const deployArgs: string[] = only(k, "Deployment").spec.template.spec.containers[0].args;
  assert.equal(jobArgs[0], "cleanup");
  assert.deepEqual(clusterFlags(jobArgs), clusterFlags(deployArgs));
  assert.ok(clusterFlags(jobArgs).length >= 4, `cluster flags: ${jobArgs.join(" ")}`);
  // The comparison can fail: one changed verb in the chart's ClusterRole is found.
  const changed = structuredClone(only(h, "ClusterRole", "operator-hub"));
  changed.rules[0].verbs = ["get", "list"];
  const [hn, kn] = normalize(changed, only(k, "ClusterRole", "operator-hub"));
  assert.throws(() => assert.deepEqual(hn, kn));
});

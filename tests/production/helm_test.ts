// The Helm chart (deploy/helm/operator-hub) with the real helm v4: lint, template for every documented values file
// accepted by a real API server's dry run, the values as flags, bad values refused, the ServiceMonitor, and a real install
// and uninstall (the same objects as kustomize's deploy/: helm_parity_test.ts).
// deno-lint-ignore-file no-explicit-any -- rendered manifests are checked field by field.

import assert from "node:assert/strict";
import YAML from "yaml";
import { kubectl, kubectlOk, requireClusters, testNamespace, waitFor } from "../support/mod.ts";
import { argsOf, CHART_DIR, exampleValuesFiles, helm, helmOk, helmTemplate, only, parseDocs } from "./_helm.ts";
import { ROOT } from "./_support.ts";

const CONTEXT = "prod";

Deno.test("helm lint --strict passes for the chart's default values and for every documented example values file", async () => {
  const examples = exampleValuesFiles();
  assert.ok(examples.length >= 4, `documented examples: ${examples.join(", ")}`);
  for (const values of [undefined, ...examples]) {
    const r = await helm(["lint", "--strict", CHART_DIR, ...(values ? ["-f", `${ROOT}${values}`] : [])]);
    assert.equal(r.code, 0, `helm lint ${values ?? "(defaults)"}:\n${r.stdout}${r.stderr}`);
    assert.match(r.stdout, /1 chart\(s\) linted, 0 chart\(s\) failed/);
  }
});

Deno.test("Every example values file starts with comments saying what it is for and how to use it", () => {
  for (const values of exampleValuesFiles()) {
    const text = Deno.readTextFileSync(`${ROOT}${values}`);
    const header = text.split("\n").filter((l) => l.startsWith("#"));
    assert.ok(text.startsWith("# ") && header.length >= 2, `${values} opens with a comment of two lines or more`);
    assert.ok(YAML.parse(text) && typeof YAML.parse(text) === "object", `${values} is a values map`);
  }
});

Deno.test("helm template renders the defaults and each example values file, and a real API server accepts every object in a server dry run within the restricted Pod Security level", async () => {
  requireClusters();
  await using ns = await testNamespace("helm-dry-run", { contexts: [CONTEXT] });
  await kubectlOk(CONTEXT, [
    "label",
    "namespace",
    ns.name,
    "pod-security.kubernetes.io/enforce=restricted",
    "pod-security.kubernetes.io/warn=restricted",
  ]);
  const dryRun = async (docs: any[]) => {
    const stdin = docs.map((d) => YAML.stringify(d)).join("---\n");
    return await kubectl(CONTEXT, ["apply", "--dry-run=server", "-f", "-"], { stdin });
  };
  for (const values of [undefined, ...exampleValuesFiles()]) {
    const what = values ?? "(defaults)";
    const args = values ? ["-f", `${ROOT}${values}`] : [];
    // Role and RoleBinding of the Secret provider go to clusterSecrets.namespace: point it at the test namespace.
    if (values && YAML.parse(Deno.readTextFileSync(`${ROOT}${values}`)).clusterSecrets?.namespace) {
      args.push("--set", `clusterSecrets.namespace=${ns.name}`);
    }
    const docs = await helmTemplate("operator-hub", ns.name, args);
    // No monitoring.coreos.com CRD on the local clusters: a ServiceMonitor is checked by its own test instead.
    const served = docs.filter((d) => d.kind !== "ServiceMonitor");
    assert.ok(served.some((d) => d.kind === "Deployment"), `${what} renders the Deployment`);
    const r = await dryRun(served);
    assert.equal(r.code, 0, `${what}: ${r.stderr}`);
    assert.doesNotMatch(r.stderr, /would violate PodSecurity/, `${what}: the pod meets the restricted level`);
    for (const d of served) {
      const line = new RegExp(
        `^${d.kind.toLowerCase()}[./][^ ]*${d.metadata.name} (created|configured|unchanged) \\(server dry run\\)$`,
        "m",
      );
      assert.match(r.stdout, line, `${what}: ${d.kind} ${d.metadata.name} in the dry run`);
    }
  }
  // The Pod Security check above can fail: a render that escalates privileges is warned about by the same server.
  const loose = await helmTemplate("operator-hub", ns.name, ["--set", "securityContext.allowPrivilegeEscalation=true"]);
  const r = await dryRun(loose.filter((d) => d.kind === "Deployment"));
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stderr, /would violate PodSecurity "restricted:latest": allowPrivilegeEscalation/);
});

Deno.test("helm template renders the values into the hub's flags: clusters, leader election or sharding, metrics, the cluster Secret namespace and extra args", async () => {
  const defaults = argsOf(await helmTemplate("operator-hub", "operator-hub"));
  assert.deepEqual(defaults, [
    "--clusters",
    "in-cluster",
    "--liveness",
    "http://0.0.0.0:8080/healthz",
    "--leader-elect",
    "--log-format",
    "json",
    "--operators=uuid",
    "--metrics-bind-address=:8443",
  ]);
  // The Mirror operator only with mirror.enabled, and then with the namespaces its Roles cover.
  const mirror = argsOf(
    await helmTemplate("operator-hub", "operator-hub", [
      "--set",
      "mirror.enabled=true",
      "--set",
      "mirror.namespaces={a,b}",
    ]),
  );
  assert.deepEqual(mirror.filter((a) => /^--(operators|mirror-namespaces)/.test(a)), [
    "--operators=uuid,mirror",
    "--mirror-namespaces=a,b",
  ]);
  const sharded = await helmTemplate("operator-hub", "operator-hub", [
    "-f",
    `${ROOT}deploy/helm/operator-hub/examples/sharded.yaml`,
    "--set",
    "sharding.warm=true",
  ]);
  const args = argsOf(sharded);
  assert.ok(args.includes("--shard") && args.includes("--shard-warm") && !args.includes("--leader-elect"));
  assert.deepEqual(args.slice(args.indexOf("--cluster-secrets"), args.indexOf("--cluster-secrets") + 2), [
    "--cluster-secrets",
    "operator-hub",
  ]);
  assert.equal(only(sharded, "Deployment").spec.replicas, 3);
  assert.deepEqual(only(sharded, "Role", "operator-hub-leader-election").rules[0].verbs, [
    "get",
    "create",
    "update",
    "list",
    "watch",
    "delete",
  ]);
  const plain = await helmTemplate("operator-hub", "operator-hub", [
    "-f",
    `${ROOT}deploy/helm/operator-hub/examples/local-plain-metrics.yaml`,
  ]);
  const plainArgs = argsOf(plain);
  assert.ok(plainArgs.includes("--metrics-secure=false") && !plainArgs.includes("--leader-elect"));
  assert.deepEqual(plainArgs.slice(-2), ["--event-level", "Normal"], "extraArgs come last");
  assert.equal(plain.filter((d) => d.kind === "Role").length, 0, "no Lease Role without leader election");
  assert.equal(only(plain, "Service").spec.ports[0].name, "http-metrics");
  const tls = await helmTemplate("operator-hub", "operator-hub", [
    "-f",
    `${ROOT}deploy/helm/operator-hub/examples/cert-manager-tls.yaml`,
  ]);
  const pod = only(tls, "Deployment").spec.template.spec;
  const tlsArgs: string[] = pod.containers[0].args;
  const certFile = tlsArgs[tlsArgs.indexOf("--tls-cert-file") + 1];
  const keyFile = tlsArgs[tlsArgs.indexOf("--tls-private-key-file") + 1];
  const mount = pod.containers[0].volumeMounts.find((m: any) => m.name === "metrics-certs");
  assert.equal(certFile, `${mount.mountPath}/tls.crt`);
  assert.equal(keyFile, `${mount.mountPath}/tls.key`);
  assert.equal(pod.volumes.find((v: any) => v.name === "metrics-certs").secret.secretName, "operator-hub-metrics-tls");
  // Without metrics.enabled, /metrics stays on the liveness port: no flag, no port, no Service.
  const off = await helmTemplate("operator-hub", "operator-hub", ["--set", "metrics.enabled=false"]);
  assert.ok(!argsOf(off).some((a) => a.startsWith("--metrics")));
  assert.equal(off.filter((d) => d.kind === "Service").length, 0);
});

Deno.test("helm template refuses bad values with an error naming the value and the valid choices", async () => {
  const cases: [string[], RegExp][] = [
    [["--set", "sharding.enabled=true"], /leaderElection\.enabled and sharding\.enabled are exclusive/],
    [["--set", "logFormat=yaml"], /'\/logFormat': value must be one of 'json', 'text'/],
    [["--set", "metrics.serviceMonitor.enabled=true", "--set", "metrics.enabled=false"], /needs metrics\.enabled/],
    [
      ["--set", "metrics.serviceMonitor.enabled=true", "--set", "metrics.service.enabled=false"],
      /needs metrics\.service\.enabled/,
    ],
    [
      ["--set", "clusterSecrets.namespace=Not_A_Namespace"],
      /'\/clusterSecrets\/namespace': 'Not_A_Namespace' does not match/,
    ],
    [["--set", "replica=3"], /additional properties 'replica' not allowed/],
    [["--set", "mirror.enabled=true"], /at '\/mirror\/namespaces': minItems: got 0, want 1/],
    [
      ["--set", "mirror.enabled=true", "--set", "mirror.namespaces={Not_A_Namespace}"],
      /'Not_A_Namespace' does not match/,
    ],
    [
      ["--set", "metrics.serviceMonitor.enabled=true"],
      /metrics\.serviceMonitor\.enabled needs a certificate Prometheus can verify: set metrics\.tls\.secretName/,
    ],
  ];
  for (const [args, message] of cases) {
    const r = await helm(["template", "operator-hub", CHART_DIR, ...args]);
    assert.notEqual(r.code, 0, `${args.join(" ")} must fail`);
    assert.match(r.stderr, message, args.join(" "));
  }
});

Deno.test("With metrics.serviceMonitor.enabled the chart renders a ServiceMonitor scraping the metrics Service over HTTPS with Prometheus' token and verifying the certificate Secret's CA, and none by default", async () => {
  const none = await helmTemplate("operator-hub", "operator-hub");
  assert.equal(none.filter((d) => d.kind === "ServiceMonitor").length, 0);
  const docs = await helmTemplate("operator-hub", "operator-hub", [
    "-f",
    `${ROOT}deploy/helm/operator-hub/examples/prometheus-operator.yaml`,
  ]);
  const sm = only(docs, "ServiceMonitor");
  assert.equal(sm.apiVersion, "monitoring.coreos.com/v1");
  assert.equal(sm.metadata.namespace, "operator-hub");
  assert.equal(sm.metadata.labels.release, "kube-prometheus-stack");
  const service = only(docs, "Service", "operator-hub-metrics");
  for (const [k, v] of Object.entries(sm.spec.selector.matchLabels)) {
    assert.equal(service.metadata.labels[k], v, `the ServiceMonitor selects the metrics Service by ${k}`);
  }
  assert.deepEqual(sm.spec.namespaceSelector.matchNames, ["operator-hub"]);
  const [endpoint] = sm.spec.endpoints;
  assert.equal(endpoint.port, service.spec.ports[0].name);
  assert.equal(endpoint.port, "https-metrics");
  assert.equal(endpoint.scheme, "https");
  assert.equal(endpoint.path, "/metrics");
  assert.equal(endpoint.interval, "15s");
  assert.equal(endpoint.bearerTokenFile, "/var/run/secrets/kubernetes.io/serviceaccount/token");
  // TLS verified: the certificate Secret's CA and the Service's DNS name, filled in by the chart.
  assert.deepEqual(endpoint.tlsConfig, {
    insecureSkipVerify: false,
    ca: { secret: { name: "operator-hub-metrics-tls", key: "ca.crt" } },
    serverName: "operator-hub-metrics.operator-hub.svc",
  });
  const mounted = only(docs, "Deployment").spec.template.spec.volumes.find((v: any) => v.name === "metrics-certs");
  assert.equal(
    mounted.secret.secretName,
    endpoint.tlsConfig.ca.secret.name,
    "the CA of the certificate the hub serves",
  );
  // Never insecure unless asked: the defaults, a ServiceMonitor with only a certificate Secret, and every example.
  const values = YAML.parse(Deno.readTextFileSync(`${CHART_DIR}/values.yaml`));
  assert.deepEqual(values.metrics.serviceMonitor.tlsConfig, {}, "values.yaml sets no TLS shortcut");
  const minimal = await helmTemplate("operator-hub", "operator-hub", [
    "--set",
    "metrics.serviceMonitor.enabled=true",
    "--set",
    "metrics.tls.secretName=hub-cert",
  ]);
  assert.deepEqual(only(minimal, "ServiceMonitor").spec.endpoints[0].tlsConfig.ca.secret, {
    name: "hub-cert",
    key: "ca.crt",
  });
  assert.equal(only(minimal, "ServiceMonitor").spec.endpoints[0].tlsConfig.insecureSkipVerify, false);
  for (const file of exampleValuesFiles()) {
    for (
      const sm of (await helmTemplate("operator-hub", "operator-hub", ["-f", `${ROOT}${file}`]))
        .filter((d) => d.kind === "ServiceMonitor")
    ) {
      assert.equal(sm.spec.endpoints[0].tlsConfig.insecureSkipVerify, false, `${file} verifies TLS`);
    }
  }
  // The check can fail: an explicit insecureSkipVerify is rendered as asked.
  const insecure = await helmTemplate("operator-hub", "operator-hub", [
    "--set",
    "metrics.serviceMonitor.enabled=true",
    "--set",
    "metrics.serviceMonitor.tlsConfig.insecureSkipVerify=true",
  ]);
  assert.equal(only(insecure, "ServiceMonitor").spec.endpoints[0].tlsConfig.insecureSkipVerify, true);
  // Prometheus' ServiceAccount may read /metrics: bound to the metrics-reader ClusterRole.
  const binding = only(docs, "ClusterRoleBinding", "operator-hub-metrics-reader");
  assert.equal(binding.roleRef.name, "operator-hub-metrics-reader");
  assert.deepEqual(binding.subjects, [{ kind: "ServiceAccount", name: "prometheus-k8s", namespace: "monitoring" }]);
  // The Service's target port is the container port the hub listens on.
  const ports = only(docs, "Deployment").spec.template.spec.containers[0].ports;
  assert.ok(ports.some((p: any) => p.name === service.spec.ports[0].targetPort && p.containerPort === 8443));
});

/** Every object that may belong to the release: all listable namespaced kinds in `ns`, and cluster-scoped ones. */
async function listing(namespace: string, release: string): Promise<string[]> {
  const kinds = async (namespaced: boolean) =>
    (await kubectlOk(CONTEXT, ["api-resources", "--verbs=list", `--namespaced=${namespaced}`, "-o", "name"]))
      .split("\n").filter(Boolean);
  const names = async (args: string[]) =>
    (await kubectlOk(CONTEXT, ["get", ...args, "-o", "name"])).split("\n").filter(Boolean);
  const [namespaced, clusterScoped] = [await kinds(true), await kinds(false)];
  console.log(`listing ${namespaced.length} namespaced and ${clusterScoped.length} cluster-scoped kinds`);
  const inNamespace = await names([namespaced.join(","), "-n", namespace]);
  // Cluster-scoped: everything labelled as the release's, and every ClusterRole(Binding) or CRD named after it.
  const labelled = await names([clusterScoped.join(","), "-l", `app.kubernetes.io/instance=${release}`]);
  const named = (await names(["clusterroles,clusterrolebindings,customresourcedefinitions"]))
    .filter((n) => n.split("/")[1].startsWith(release));
  return [...new Set([...inNamespace.map((n) => `${namespace}/${n}`), ...labelled, ...named])].sort();
}

Deno.test("helm install and helm uninstall against prod create exactly the chart's objects and leave nothing behind", async () => {
  requireClusters();
  await using ns = await testNamespace("helm-install", { contexts: [CONTEXT] });
  const release = `hub-${ns.name.split("-").pop()}`;
  const fullname = `${release}-operator-hub`;
  const values = await Deno.makeTempFile({ prefix: "operator-hub-values-", suffix: ".yaml" });
  // Every optional object on, except the CRD (clusters:up installed it; the release must not take it over) and the
  // ServiceMonitor (no monitoring.coreos.com CRD here).
  Deno.writeTextFileSync(
    values,
    YAML.stringify({
      crds: { install: false },
      clusterSecrets: { namespace: ns.name },
      metrics: { readers: [{ kind: "ServiceAccount", name: "prometheus", namespace: ns.name }] },
      mirror: { enabled: true, namespaces: [ns.name] },
    }),
  );
  const crdUid = async () =>
    (await kubectlOk(CONTEXT, ["get", "crd", "uuid.demo.operator", "-o", "jsonpath={.metadata.uid}"])).trim();
  const uidBefore = await crdUid();
  try {
    const before = await listing(ns.name, release);
    const installed = await helmOk([
      "install",
      release,
      CHART_DIR,
      "-n",
      ns.name,
      "--kube-context",
      CONTEXT,
      "-f",
      values,
    ]);
    assert.match(installed, /STATUS: deployed/);
    const during = await listing(ns.name, release);
    // The cluster's own controllers (kube-controller-manager) make objects from the chart's: the Deployment's
    // ReplicaSet and Pods, the Service's Endpoints and EndpointSlices, and Events. They are not the chart's, but each
    // must come from one of its objects (named after it), and all but the Events must be gone after uninstall.
    const derived = (n: string) =>
      /\/(replicaset\.apps|pod|endpoints|endpointslice\.discovery\.k8s\.io|event|event\.events\.k8s\.io)\//.test(n);
    const added = during.filter((n) => !before.includes(n) && !derived(n));
    for (const n of during.filter((n) => !before.includes(n) && derived(n))) {
      assert.ok(n.split("/")[2].startsWith(fullname), `${n} was made from one of the release's objects`);
    }
    const chartObjects = [
      `${ns.name}/deployment.apps/${fullname}`,
      `${ns.name}/service/${fullname}-metrics`,
      `${ns.name}/serviceaccount/${fullname}`,
      `${ns.name}/role.rbac.authorization.k8s.io/${fullname}-leader-election`,
      `${ns.name}/role.rbac.authorization.k8s.io/${fullname}-cluster-secrets`,
      `${ns.name}/rolebinding.rbac.authorization.k8s.io/${fullname}-leader-election`,
      `${ns.name}/rolebinding.rbac.authorization.k8s.io/${fullname}-cluster-secrets`,
      `${ns.name}/role.rbac.authorization.k8s.io/${fullname}-mirror`,
      `${ns.name}/rolebinding.rbac.authorization.k8s.io/${fullname}-mirror`,
      `clusterrole.rbac.authorization.k8s.io/${fullname}`,
      `clusterrole.rbac.authorization.k8s.io/${fullname}-metrics-reader`,
      `clusterrole.rbac.authorization.k8s.io/${fullname}-mirror`,
      `clusterrolebinding.rbac.authorization.k8s.io/${fullname}`,
      `clusterrolebinding.rbac.authorization.k8s.io/${fullname}-metrics-reader`,
      `clusterrolebinding.rbac.authorization.k8s.io/${fullname}-mirror`,
    ];
    // The pre-delete hook's objects are not installed: helm creates them on uninstall only.
    // Plus helm's own record of the release, a Secret in the release namespace.
    const expected = [...chartObjects, `${ns.name}/secret/sh.helm.release.v1.${release}.v1`].sort();
    console.log(`listing before install (${before.length}): ${before.join(" ") || "(nothing)"}`);
    console.log(`added by helm install (${added.length}):\n  ${added.join("\n  ")}`);
    assert.deepEqual(added, expected);
    // The objects on the server are the ones helm template renders for the same values.
    const rendered = parseDocs(
      await helmOk(["template", release, CHART_DIR, "-n", ns.name, "-f", values]),
    );
    const live = YAML.parse(await kubectlOk(CONTEXT, ["get", "clusterrole", fullname, "-o", "yaml"]));
    assert.deepEqual(live.rules, only(rendered, "ClusterRole", fullname).rules);
    assert.match(await helmOk(["list", "-n", ns.name, "--kube-context", CONTEXT]), new RegExp(`^${release}\\s`, "m"));

    // --no-hooks: the pre-delete clean-up Job would never finish here (these clusters run no kubelet); its objects
    // and rights are checked by "The chart's pre-delete hook …" below.
    const uninstalled = await helmOk(["uninstall", release, "-n", ns.name, "--kube-context", CONTEXT, "--no-hooks"]);
    assert.match(uninstalled, new RegExp(`release "${release}" uninstalled`));
    // The garbage collector removes the ReplicaSet and Pods after the Deployment, asynchronously (hang guard: 120 s).
    const lasting = (n: string) => !/\/(event|event\.events\.k8s\.io)\//.test(n);
    let after: string[] = [];
    await waitFor(
      async () => {
        after = (await listing(ns.name, release)).filter(lasting);
        return after.length === before.filter(lasting).length;
      },
      "the release's objects and what the controllers made from them gone",
      120_000,
    );
    console.log(`listing after uninstall, Events aside (${after.length}): ${after.join(" ") || "(nothing)"}`);
    assert.deepEqual(after, before.filter(lasting), "helm uninstall leaves what was there before, and nothing else");
    // No release left in any state (helm v4 has no --all: every state is asked for).
    const states = ["--deployed", "--failed", "--pending", "--superseded", "--uninstalled", "--uninstalling"];
    assert.equal((await helmOk(["list", "-q", ...states, "-n", ns.name, "--kube-context", CONTEXT])).trim(), "");
    assert.equal(await crdUid(), uidBefore, "the CRD the release did not install is untouched");
  } finally {
    await helm(["uninstall", release, "-n", ns.name, "--kube-context", CONTEXT, "--ignore-not-found", "--no-hooks"]);
    for (const suffix of ["", "-metrics-reader", "-mirror"]) {
      await kubectl(CONTEXT, ["delete", `clusterrole/${fullname}${suffix}`, "--ignore-not-found"]);
      await kubectl(CONTEXT, ["delete", `clusterrolebinding/${fullname}${suffix}`, "--ignore-not-found"]);
    }
    await Deno.remove(values);
  }
});

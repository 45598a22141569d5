// deploy/ and the Dockerfile: what they promise, checked statically, by a real API server's dry run, and by a real
// apply of the RBAC objects whose grants are then asked back from the API server.
// deno-lint-ignore-file no-explicit-any -- manifests are checked field by field below.

import assert from "node:assert/strict";
import YAML from "yaml";
import { kubectl, kubectlOk, requireClusters } from "../support/mod.ts";
import {
  applyDeployRbac,
  compilePermissions,
  flagValues,
  kustomize,
  METRICS_CERTS_DIR,
  MOUNT_DIR,
  readYamlDocs,
  remoteKubeconfig,
  ROOT,
  SERVICE_ACCOUNT_DIR,
} from "./_support.ts";
import { observeHub } from "./_apiserver_proxy.ts";
import { globMatches, hostLibrary, imageAllocator } from "../../dev/support/image_allocator.ts";

const CONTEXT = "dev";
const SA = "system:serviceaccount:operator-hub:operator-hub";
/** `kubectl auth can-i` processes run at once. */
const CAN_I_AT_ONCE = 6;

function one(docs: any[], kind: string, name?: string): any {
  const found = docs.filter((d) => d.kind === kind && (name === undefined || d.metadata.name === name));
  assert.equal(found.length, 1, `exactly one ${kind}${name ? ` ${name}` : ""}`);
  return found[0];
}

Deno.test("deploy/'s ClusterRole grants exactly what a running hub's pre-flight asks and its requests use with the Deployment's operators (Uuid only), no Secrets, ConfigMaps or Namespaces, and Leases only through a Role in its namespace", async () => {
  const docs = await kustomize("deploy");
  assert.deepEqual(docs.map((d) => d.kind).sort(), [
    "ClusterRole",
    "ClusterRole",
    "ClusterRoleBinding",
    "CustomResourceDefinition",
    "CustomResourceDefinition",
    "Deployment",
    "Namespace",
    "Role",
    "Role",
    "RoleBinding",
    "RoleBinding",
    "Service",
    "ServiceAccount",
  ]);
  // What the grants must be is read off a real hub: the pre-flight's questions (seen at a proxy) and the requests
  // it sends, with leader election on so the Lease questions are asked too.
  const role = one(docs, "Role", "operator-hub-leader-election");
  assert.equal(role.metadata.namespace, "operator-hub");
  requireClusters();
  // The operators the Deployment runs (the Uuid operator only: the Mirror operator is an opt-in component).
  const deployArgs: string[] = one(docs, "Deployment").spec.template.spec.containers[0].args;
  const operators = deployArgs.filter((a) => a.startsWith("--operators"));
  assert.deepEqual(operators, ["--operators=uuid"], "deploy/ runs the Uuid operator only");
  const seen = await observeHub(CONTEXT, [
    ...operators,
    "--leader-elect",
    "--leader-elect-namespace",
    role.metadata.namespace,
  ]);
  // The observed hub may have taken the Lease (when the namespace exists): leave none behind.
  await kubectl(CONTEXT, [
    "delete",
    "lease",
    "operator-hub.demo.operator",
    "-n",
    role.metadata.namespace,
    "--ignore-not-found",
  ]);
  const grant = (p: { verb: string; group: string; resource: string; subresource?: string }) =>
    `${p.verb} ${p.resource}${p.subresource ? `/${p.subresource}` : ""}.${p.group}`;
  const grants = (rules: any[]) =>
    new Set(
      rules.flatMap((r) =>
        r.apiGroups.flatMap((g: string) =>
          r.resources.flatMap((res: string) => r.verbs.map((v: string) => `${v} ${res}.${g}`))
        )
      ),
    );
  const leases = seen.asked.filter((p) => p.resource === "leases");
  assert.ok(leases.length > 0 && leases.length < seen.asked.length, JSON.stringify(seen.asked));
  assert.ok(leases.every((p) => p.namespace === role.metadata.namespace), "Lease questions are about its namespace");
  assert.deepEqual(grants(role.rules), new Set(leases.map(grant)), "the Role grants exactly the Lease questions");
  const wanted = new Set(seen.asked.filter((p) => p.resource !== "leases").map(grant));
  assert.ok(
    seen.requests.some((r) => /^POST \/apis\/authorization\.k8s\.io\/v1\/selfsubjectaccessreviews$/.test(r)),
    `the hub asks by creating SelfSubjectAccessReviews: ${seen.requests.join(", ")}`,
  );
  wanted.add("create selfsubjectaccessreviews.authorization.k8s.io");
  // Two grants a run against this CRD cannot show: the pre-flight asks `patch uuid` instead of `patch uuid/status`
  // for a CRD without the status subresource (hub_e2e's seed-shaped CRD test), and a repeated Event is patched.
  wanted.add("patch uuid.demo.operator");
  wanted.add("patch events.");
  // The protected metrics port (--metrics-bind-address, which the Deployment sets) reviews every scraper's token and
  // right in the home cluster; tests/production/protected_port_test.ts runs that path.
  wanted.add("create tokenreviews.authentication.k8s.io");
  wanted.add("create subjectaccessreviews.authorization.k8s.io");
  assert.deepEqual(grants(one(docs, "ClusterRole", "operator-hub").rules), wanted);
  // Least privilege: no ClusterRole of the default install touches Secrets, ConfigMaps or Namespaces.
  for (const r of docs.filter((d) => d.kind === "ClusterRole").flatMap((d) => d.rules)) {
    for (const res of ["secrets", "configmaps", "namespaces"]) {
      assert.ok(!(r.apiGroups?.includes("") && r.resources?.includes(res)), `a ClusterRole grants ${res}`);
    }
  }
  const subject = [{ kind: "ServiceAccount", name: "operator-hub", namespace: "operator-hub" }];
  assert.deepEqual(one(docs, "ClusterRoleBinding").subjects, subject);
  assert.deepEqual(one(docs, "ClusterRoleBinding").roleRef.name, "operator-hub");
  assert.deepEqual(one(docs, "RoleBinding", "operator-hub-leader-election").subjects, subject);
  assert.equal(one(docs, "RoleBinding", "operator-hub-leader-election").roleRef.kind, "Role");
  // A remote cluster gets the same Uuid CRD, ServiceAccount and ClusterRole, no Lease rights, and a token Secret; no
  // Mirror CRD, as Mirrors live in the home cluster only.
  const remote = await kustomize("deploy/remote");
  assert.deepEqual(remote.map((d) => d.kind).sort(), [
    "ClusterRole",
    "ClusterRoleBinding",
    "CustomResourceDefinition",
    "Namespace",
    "Secret",
    "ServiceAccount",
  ]);
  assert.deepEqual(one(remote, "ClusterRole").rules, one(docs, "ClusterRole", "operator-hub").rules);
  const token = one(remote, "Secret");
  assert.equal(token.type, "kubernetes.io/service-account-token");
  assert.equal(token.metadata.annotations["kubernetes.io/service-account.name"], "operator-hub");
});

Deno.test("deploy/'s CRDs are crds/uuid.yaml and, for the home cluster only, crds/mirror.yaml", async () => {
  const docs = await kustomize("deploy");
  assert.deepEqual(one(docs, "CustomResourceDefinition", "uuid.demo.operator"), readYamlDocs("crds/uuid.yaml")[0]);
  assert.deepEqual(one(docs, "CustomResourceDefinition", "mirrors.demo.operator"), readYamlDocs("crds/mirror.yaml")[0]);
  assert.deepEqual(readYamlDocs("deploy/cluster/crd.yaml")[0], readYamlDocs("crds/uuid.yaml")[0]);
  assert.deepEqual(readYamlDocs("deploy/mirror-crd.yaml")[0], readYamlDocs("crds/mirror.yaml")[0]);
  const remote = await kustomize("deploy/remote");
  assert.deepEqual(remote.filter((d) => d.kind === "CustomResourceDefinition").map((d) => d.metadata.name), [
    "uuid.demo.operator",
  ]);
});

Deno.test("deploy/'s Deployment probes /healthz and /readyz on the --liveness port, runs locked down, and mounts the kubeconfigs where the binary may read", async () => {
  const d = one(await kustomize("deploy"), "Deployment");
  const pod = d.spec.template.spec;
  assert.equal(pod.serviceAccountName, "operator-hub");
  assert.equal(pod.containers.length, 1);
  const c = pod.containers[0];
  const args: string[] = c.args;
  const liveness = new URL(args[args.indexOf("--liveness") + 1]);
  assert.equal(liveness.hostname, "0.0.0.0");
  const port = c.ports.find((p: any) => p.containerPort === Number(liveness.port));
  assert.ok(port, "the --liveness port is a container port");
  assert.equal(c.livenessProbe.httpGet.path, "/healthz");
  assert.equal(c.readinessProbe.httpGet.path, "/readyz");
  for (const probe of [c.livenessProbe, c.readinessProbe]) {
    assert.ok([port.name, port.containerPort].includes(probe.httpGet.port));
  }
  assert.ok(args[args.indexOf("--clusters") + 1].split(",").includes("in-cluster"));
  assert.ok(args.includes("--leader-elect"));
  assert.ok(d.spec.replicas >= 2, "a warm standby");
  // Security context: restricted Pod Security level.
  assert.equal(pod.securityContext.runAsNonRoot, true);
  assert.equal(pod.securityContext.runAsUser, 65532);
  assert.equal(pod.securityContext.seccompProfile.type, "RuntimeDefault");
  assert.equal(c.securityContext.readOnlyRootFilesystem, true);
  assert.equal(c.securityContext.allowPrivilegeEscalation, false);
  assert.equal(c.securityContext.runAsNonRoot, true);
  assert.deepEqual(c.securityContext.capabilities.drop, ["ALL"]);
  assert.equal(c.securityContext.seccompProfile.type, "RuntimeDefault");
  for (const k of ["requests", "limits"]) {
    assert.ok(c.resources[k].cpu && c.resources[k].memory, `resources.${k} set`);
  }
  // The Secret is mounted read-only exactly where the compiled binary may read (and the hub looks: ./clusters).
  const mount = c.volumeMounts.find((m: any) => m.mountPath === MOUNT_DIR);
  assert.ok(mount && mount.readOnly === true, `a read-only mount at ${MOUNT_DIR}`);
  const volume = pod.volumes.find((v: any) => v.name === mount.name);
  assert.equal(volume.secret.secretName, "operator-hub-kubeconfigs");
  assert.equal(volume.secret.optional, true, "without remote clusters the hub serves its own");
  assert.deepEqual(flagValues(compilePermissions(), "--allow-read"), [
    MOUNT_DIR,
    SERVICE_ACCOUNT_DIR,
    METRICS_CERTS_DIR,
  ]);
  assert.notEqual(pod.automountServiceAccountToken, false, "in-cluster login needs the token");
  const example = readYamlDocs("deploy/examples/remote-kubeconfigs-secret.yaml")[0];
  assert.equal(example.metadata.name, volume.secret.secretName);
  assert.equal(example.metadata.namespace, d.metadata.namespace);
  for (const key of Object.keys(example.stringData)) assert.match(key, /\.yaml$/, "the hub loads clusters/*.yaml");
});

Deno.test("The Dockerfile builds with the compile task on deno 2.9.6 from base images pinned by digest, runs the binary non-root on distroless from /app with the Uuid operator only and /metrics and /status only on the protected port, and .dockerignore admits only the sources", () => {
  const text = Deno.readTextFileSync(`${ROOT}Dockerfile`);
  const lines = text.split("\n").filter((l) => l.trim() && !l.trimStart().startsWith("#"));
  const froms = lines.filter((l) => l.startsWith("FROM "));
  // Every base image pinned by digest, its tag kept beside it for humans.
  const digest = "@sha256:[a-f0-9]{64}";
  assert.equal(froms.length, 3, froms.join("\n"));
  assert.match(froms[0], new RegExp(`^FROM denoland/deno:2\\.9\\.6${digest} AS build$`));
  assert.match(froms[1], new RegExp(`^FROM debian:bookworm-slim${digest} AS jemalloc$`));
  assert.match(froms[2], new RegExp(`^FROM gcr\\.io/distroless/cc-debian12:nonroot${digest}$`));
  const final = lines.slice(lines.indexOf(froms.at(-1)!));
  assert.ok(lines.includes("RUN deno task compile && ./dist/operator-hub --version"));
  assert.ok(final.includes("ENV DENO_USE_CGROUPS=1"));
  assert.ok(final.includes(`WORKDIR ${MOUNT_DIR.replace(/\/clusters$/, "")}`), "WORKDIR is the parent of the mount");
  assert.ok(final.includes("USER 65532:65532"));
  const entrypoint = final.find((l) => l.startsWith("ENTRYPOINT "))!;
  assert.deepEqual(JSON.parse(entrypoint.slice("ENTRYPOINT ".length)), ["/app/operator-hub"], "exec form");
  const cmd = final.find((l) => l.startsWith("CMD "))!;
  const args: string[] = JSON.parse(cmd.slice("CMD ".length));
  assert.ok(Array.isArray(args), "exec form");
  // Safe by default: /metrics and /status only on the protected port (TokenReview + SubjectAccessReview), the Uuid
  // operator only (the Mirror operator writes Secrets), and the protected port exposed.
  assert.ok(args.includes("--metrics-bind-address=:8443"), `CMD ${args.join(" ")}`);
  assert.ok(!args.some((a) => a.startsWith("--metrics-secure")), "the protected port stays HTTPS with auth");
  assert.deepEqual(args.filter((a) => a.startsWith("--operators")), ["--operators=uuid"]);
  const exposed = final.filter((l) => l.startsWith("EXPOSE ")).flatMap((l) => l.split(/\s+/).slice(1));
  assert.ok(exposed.includes("8443") && exposed.includes("8080"), `EXPOSE ${exposed.join(" ")}`);
  const ignore = Deno.readTextFileSync(`${ROOT}.dockerignore`).split("\n").map((l) => l.trim());
  for (const want of ["*", "!deno.json", "!deno.lock", "!src/"]) {
    assert.ok(ignore.includes(want), `.dockerignore ${want}`);
  }
});

Deno.test("The image preloads Debian's pinned libjemalloc2, copied from the one file of the package's list its stage's glob matches to an architecture-independent path, and it needs only libraries distroless's cc image ships", async () => {
  const image = imageAllocator(Deno.readTextFileSync(`${ROOT}Dockerfile`));
  assert.equal(image.package, "libjemalloc2");
  assert.match(image.version, /^\d+\.\d+\.\d+-\d+$/, "an exact Debian version");
  // The same Debian release as distroless's cc-debian12, so the library was built against the image's glibc.
  assert.match(image.stageFrom, /^debian:bookworm(-slim)?@sha256:[a-f0-9]{64}$/);
  assert.equal(image.copySource, image.stagePath, "the final stage copies what the stage's cp wrote");
  assert.ok(
    image.path.startsWith("/") && !/linux-gnu/.test(image.path),
    `one path for every architecture: ${image.path}`,
  );
  assert.equal(image.chmod, "0444", "readable by the non-root user, writable by nobody");
  assert.deepEqual(Object.keys(image.env).sort(), ["DENO_USE_CGROUPS", "LD_PRELOAD", "MALLOC_CONF"]);
  // jemalloc's options, `name:value` pairs (compiled_permissions_test.ts runs the hub with them: no warning).
  assert.match(image.env.MALLOC_CONF, /^[a-z_]+:[\w.-]+(,[a-z_]+:[\w.-]+)*$/);
  // Debian's file list (this machine has the pinned package: .ci/run installs it) has exactly one match for the glob,
  // also under another architecture's multiarch folder.
  const host = await hostLibrary(image);
  assert.ok(globMatches(image.sourceGlob, host.path.replace("x86_64-linux-gnu", "aarch64-linux-gnu")));
  assert.ok(!globMatches(image.sourceGlob, "/usr/share/doc/libjemalloc2/README"));
  // Its dependencies: glibc's libc, libm and loader (libc6), libgcc_s (libgcc-s1) and libstdc++ (libstdc++6), all
  // in gcr.io/distroless/cc-debian12 (base's libc6 plus libgcc-s1, libgomp1 and libstdc++6).
  const ldd = await new Deno.Command("ldd", { args: [host.path], stdin: "null" }).output();
  assert.equal(ldd.code, 0, new TextDecoder().decode(ldd.stderr));
  const needed = new TextDecoder().decode(ldd.stdout).split("\n").map((l) => l.trim().split(/\s+/)[0]).filter(Boolean)
    .map((p) => p.split("/").pop()!).filter((n) => n !== "linux-vdso.so.1");
  const distrolessCc = /^(libc\.so\.6|libm\.so\.6|libgcc_s\.so\.1|libstdc\+\+\.so\.6|ld-linux[-\w.]*\.so\.\d)$/;
  assert.ok(needed.length >= 2, `ldd lists the libraries: ${needed}`);
  for (const lib of needed) assert.match(lib, distrolessCc, `${lib} is in distroless's cc image`);
  // Neither deploy/ nor the chart's defaults override the image's allocator.
  const container = one(await kustomize("deploy"), "Deployment").spec.template.spec.containers[0];
  for (const e of container.env ?? []) assert.ok(!/^(LD_PRELOAD|MALLOC_CONF)$/.test(e.name), `deploy/ sets ${e.name}`);
  const values = YAML.parse(Deno.readTextFileSync(`${ROOT}deploy/helm/operator-hub/values.yaml`));
  assert.deepEqual(values.extraEnv ?? [], [], "the chart adds no environment by default");
});

Deno.test("The example Secret's kubeconfig format is accepted by the hub's kubeconfig loader", async () => {
  requireClusters();
  const tmp = await Deno.makeTempDir({ prefix: "operator-hub-example-" });
  try {
    Deno.writeTextFileSync(`${tmp}/staging.yaml`, remoteKubeconfig("staging", "token-value"));
    const { loadContexts } = await import("../../src/kube/mod.ts");
    const catalog = await loadContexts({ files: [`${tmp}/staging.yaml`] });
    assert.deepEqual(catalog.names(), ["staging"]);
    const [access] = catalog.select(["staging"]);
    assert.equal((await access.auth()).headers.Authorization, "Bearer token-value");
  } finally {
    await Deno.remove(tmp, { recursive: true });
  }
});

Deno.test("kubectl apply --dry-run=server -k deploy/ and -k deploy/remote/ pass against a real API server, after a real apply of the RBAC objects", async () => {
  requireClusters();
  const applied = await applyDeployRbac(CONTEXT);
  for (
    const obj of [
      "namespace/operator-hub",
      "serviceaccount/operator-hub",
      "clusterrole.rbac.authorization.k8s.io/operator-hub",
    ]
  ) {
    assert.match(applied, new RegExp(`${obj.replace(/\./g, "\\.")} (created|configured|unchanged)`));
  }
  for (const dir of ["deploy/", "deploy/remote/"]) {
    const r = await kubectl(CONTEXT, ["apply", "--dry-run=server", "-k", `${ROOT}${dir}`]);
    assert.equal(r.code, 0, `${dir}: ${r.stderr}`);
    assert.doesNotMatch(r.stderr, /would violate PodSecurity/, "the pod meets the restricted level");
  }
  const r = await kubectl(CONTEXT, ["apply", "--dry-run=server", "-k", `${ROOT}deploy/`]);
  assert.match(r.stdout, /deployment\.apps\/operator-hub (created|configured|unchanged) \(server dry run\)/);
});

Deno.test("After a real apply, the API server grants the hub's ServiceAccount exactly the ClusterRole's verbs, Leases and read-only Secrets only in its namespace, and answers no to `kubectl auth can-i list secrets -A`", async () => {
  requireClusters();
  await applyDeployRbac(CONTEXT);
  // kubectl answers yes (exit 0) or no (exit 1); anything else (a bad flag, an unreachable server) is not a "no".
  const can = async (verb: string, resource: string, ns?: string) => {
    const [res, sub] = resource.split("/");
    const args = [verb, res, ...(sub ? [`--subresource=${sub}`] : []), `--as=${SA}`, ...(ns ? ["-n", ns] : ["-A"])];
    const r = await kubectl(CONTEXT, ["auth", "can-i", ...args]);
    if (r.code === 0 && r.stdout.trim() === "yes") return true;
    if (r.code === 1 && r.stdout.trim() === "no") return false;
    throw new Error(`kubectl auth can-i ${args.join(" ")}: exit ${r.code}, stdout ${r.stdout}, stderr ${r.stderr}`);
  };
  const yes: [string, string, string?][] = [
    ["get", "uuid.demo.operator"],
    ["list", "uuid.demo.operator"],
    ["watch", "uuid.demo.operator"],
    ["patch", "uuid.demo.operator", "some-namespace"],
    ["patch", "uuid.demo.operator/status", "some-namespace"],
    ["create", "events", "some-namespace"],
    ["patch", "events", "some-namespace"],
    ["create", "selfsubjectaccessreviews.authorization.k8s.io"],
    ["get", "leases.coordination.k8s.io", "operator-hub"],
    ["create", "leases.coordination.k8s.io", "operator-hub"],
    ["update", "leases.coordination.k8s.io", "operator-hub"],
    ["list", "secrets", "operator-hub"],
  ];
  const no: [string, string, string?][] = [
    // Least privilege: no Secret outside the hub's own namespace (where the cluster Secrets are), in the whole
    // cluster least of all; no ConfigMaps, Namespaces or Mirrors (the Mirror operator is an opt-in component).
    ["list", "secrets"],
    ["get", "secrets", "kube-system"],
    ["watch", "secrets", "some-namespace"],
    ["create", "secrets", "operator-hub"],
    ["list", "configmaps"],
    ["patch", "configmaps", "some-namespace"],
    ["create", "namespaces"],
    ["patch", "mirrors.demo.operator", "some-namespace"],
    ["patch", "mirrors.demo.operator/status", "some-namespace"],
    ["update", "uuid.demo.operator", "some-namespace"],
    ["delete", "uuid.demo.operator", "some-namespace"],
    ["create", "uuid.demo.operator", "some-namespace"],
    ["update", "uuid.demo.operator/status", "some-namespace"],
    ["update", "secrets", "some-namespace"],
    ["update", "mirrors.demo.operator", "some-namespace"],
    ["delete", "mirrors.demo.operator", "some-namespace"],
    ["delete", "namespaces"],
    ["list", "events", "some-namespace"],
    ["delete", "events", "some-namespace"],
    ["get", "leases.coordination.k8s.io", "kube-system"],
    ["update", "leases.coordination.k8s.io", "kube-system"],
    ["delete", "leases.coordination.k8s.io", "operator-hub"],
    ["get", "customresourcedefinitions.apiextensions.k8s.io"],
  ];
  // The questions do not depend on each other: ask them CAN_I_AT_ONCE at a time, then check every answer.
  const questions = [...yes, ...no];
  const answers: boolean[] = [];
  let next = 0;
  const asker = async () => {
    for (let i = next++; i < questions.length; i = next++) answers[i] = await can(...questions[i]);
  };
  await Promise.all(Array.from({ length: CAN_I_AT_ONCE }, asker));
  for (const [i, [verb, resource, ns]] of yes.entries()) {
    assert.equal(answers[i], true, `may ${verb} ${resource} ${ns ?? ""}`);
  }
  for (const [i, [verb, resource, ns]] of no.entries()) {
    assert.equal(answers[yes.length + i], false, `may not ${verb} ${resource} ${ns ?? ""}`);
  }
  // The RBAC objects on the server are deploy/'s, field for field.
  const live = YAML.parse(await kubectlOk(CONTEXT, ["get", "clusterrole", "operator-hub", "-o", "yaml"]));
  const want = one(await kustomize("deploy"), "ClusterRole", "operator-hub");
  assert.deepEqual(live.rules, want.rules);
});

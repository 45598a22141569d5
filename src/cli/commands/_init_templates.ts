// The files `operator-hub init` writes: a project of one operator, its resource, a test on the kit and deploy manifests.

/** What the templates are filled with (every name already checked by init.ts). */
export interface InitNames {
  /** The project's name (a DNS label, from DIR's base name): the Deployment, ServiceAccount and namespace. */
  project: string;
  /** API group, with a dot. */
  group: string;
  /** UpperCamelCase kind. */
  kind: string;
  /** Lower-case plural resource name. */
  plural: string;
  /** The kind in snake_case: the files' prefix. */
  snake: string;
  /** The kind in camelCase: the operator's export is `${camel}Operator`. */
  camel: string;
  /** How `@operator-hub/hub` resolves: `{ link: PATH }` to a checkout (relative to the project), or the JSR package. */
  hub: { link: string } | { jsr: true };
}

/** The JSR import of the hub, as it will be published. */
export const HUB_JSR = "jsr:@operator-hub/hub@^0.1.0";

/** TypeBox as the hub pins it in its deno.json (a unit test keeps the two equal). */
export const TYPEBOX = "npm:typebox@1.4.3";

/** Every file of the project, by path relative to its folder. */
export function projectFiles(n: InitNames): Record<string, string> {
  return {
    "deno.json": denoJson(n),
    "README.md": readme(n),
    "main.ts": mainTs(n),
    [`${n.snake}_resource.ts`]: resourceTs(n),
    [`${n.snake}_operator.ts`]: operatorTs(n),
    [`${n.snake}_operator_test.ts`]: testTs(n),
    "deploy/kustomization.yaml": kustomization(n),
    "deploy/rbac.yaml": rbac(n),
    "deploy/deployment.yaml": deployment(n),
    "Dockerfile": dockerfile(n),
  };
}

function denoJson(n: InitNames): string {
  const json = {
    imports: { "@operator-hub/hub": HUB_JSR, "typebox": TYPEBOX },
    // Before publishing: the checkout this project links to resolves `@operator-hub/hub` instead of JSR.
    ...("link" in n.hub ? { links: [n.hub.link] } : {}),
    tasks: {
      run: "deno run --no-prompt --allow-net --allow-read --allow-env --allow-run --allow-sys=hostname main.ts " +
        `--operators none ${n.snake}_operator.ts`,
      test: "deno test --allow-all",
      crd: `deno run --no-prompt --allow-read main.ts crd ${n.snake}_resource.ts`,
    },
    fmt: { lineWidth: 120, proseWrap: "preserve" },
  };
  return JSON.stringify(json, null, 2) + "\n";
}

function readme(n: InitNames): string {
  return `# ${n.project}

An operator for \`${n.kind}\` (\`${n.plural}.${n.group}\`), hosted by [operator-hub](https://jsr.io/@operator-hub/hub).

- \`${n.snake}_resource.ts\`: the ${n.kind} resource, written once (its TypeScript types and its CRD come from it).
- \`${n.snake}_operator.ts\`: the handlers. Each ${n.kind} gets a ConfigMap holding \`spec.message\` (adopted: it is
  deleted with its ${n.kind}) and \`status.phase: Ready\`.
- \`${n.snake}_operator_test.ts\`: a test on two real local clusters (\`@operator-hub/hub/testing\`).
- \`main.ts\`: the hub's command line (\`deno task run\` hosts the operators \`${n.snake}_operator.ts\` exports);
  \`deploy/\`: kustomize manifests.

\`\`\`sh
deno task test                                   # starts real local clusters (the first run builds them once)
deno task crd | kubectl apply -f -               # the CRD, generated from ${n.snake}_resource.ts
deno task run --kubeconfig ~/.kube/config --clusters my-context,other-context
deno task crd > deploy/crd.yaml && kubectl apply -k deploy/   # in a cluster (build the image first: Dockerfile)
\`\`\`

The first \`deno task test\` builds kube-apiserver, kube-controller-manager and etcd with Go (minutes, once; cached in
\`~/.cache/operator-hub\`). \`OPERATOR_HUB_KUBE_BIN=DIR\` uses prebuilt ones instead (a checkout's \`.cache/kube-bin\`).
${
    "link" in n.hub
      ? `
\`deno.json\` links \`@operator-hub/hub\` to the checkout at \`${n.hub.link}\` until the package is published: delete
its \`links\` line to use JSR.
`
      : ""
  }`;
}

function mainTs(n: InitNames): string {
  return `// The hub's command line (every flag of \`operator-hub --help\`): \`deno task run --clusters a,b\` hosts the operators
// ${n.snake}_operator.ts exports, as \`kopf run\` does; \`deno task crd\` prints the CRD of ${n.snake}_resource.ts.

import { main } from "@operator-hub/hub/cli";

if (import.meta.main) Deno.exit(await main(Deno.args));
`;
}

function resourceTs(n: InitNames): string {
  return `// The ${n.kind} resource, written once: \`deno task crd\` prints its CRD, and its handlers are typed by it.

import Type from "typebox";
import { defineResource } from "@operator-hub/hub/resources";

/** A ${n.kind}: its operator keeps a ConfigMap of the same name holding \`spec.message\`. */
export const ${n.kind} = defineResource({
  group: ${JSON.stringify(n.group)},
  version: "v1",
  kind: ${JSON.stringify(n.kind)},
  plural: ${JSON.stringify(n.plural)},
  description: "A ${n.kind}: its operator keeps a ConfigMap of the same name holding spec.message.",
  spec: Type.Object({
    message: Type.String({ minLength: 1, description: "What the ${n.kind}'s ConfigMap holds." }),
  }),
  status: Type.Object({
    phase: Type.Optional(Type.String({ description: "Ready once the ConfigMap holds spec.message." })),
    configMap: Type.Optional(Type.String({ description: "The ConfigMap's name." })),
  }),
  printerColumns: [{ name: "Phase", type: "string", jsonPath: ".status.phase" }],
});
`;
}

function operatorTs(n: InitNames): string {
  return `// The ${n.kind} operator: each ${n.kind} gets a ConfigMap of the same name holding spec.message, adopted (the
// garbage collector deletes it with its ${n.kind}; one deleted by hand comes back), and status.phase "Ready".

import { defineHandlers, ignoreNotFound, kinds } from "@operator-hub/hub";
import { ${n.kind} } from "./${n.snake}_resource.ts";

/** The ${n.kind} operator: \`owns\` requeues a ${n.kind} when its ConfigMap changes or goes. */
export const ${n.camel}Operator = defineHandlers({
  name: ${JSON.stringify(n.plural)},
  resource: ${n.kind},
  owns: [{ type: kinds.ConfigMap, verbs: ["get", "create", "patch"] }],
  // Level-based: runs at creation, after each spec change and whenever the ConfigMap changed; returns status fields.
  async reconcile({ spec, namespace, name, adopt, clientFor }) {
    const configMaps = clientFor(kinds.ConfigMap);
    const data = { message: spec.message };
    const current = await configMaps.get({ namespace, name }).catch(ignoreNotFound);
    if (!current) await configMaps.create(adopt({ metadata: { name }, data }));
    else if (current.data?.message !== spec.message) await configMaps.patch({ namespace, name }, { data });
    return { phase: "Ready", configMap: name };
  },
});
`;
}

function testTs(n: InitNames): string {
  return `// The ${n.kind} operator on two real local clusters: each ${n.kind} gets its ConfigMap and its status, in each.

import assert from "node:assert/strict";
import { kinds } from "@operator-hub/hub";
import { eventually, testEnv } from "@operator-hub/hub/testing";
import { ${n.kind} } from "./${n.snake}_resource.ts";
import { ${n.camel}Operator } from "./${n.snake}_operator.ts";

Deno.test("a ${n.kind} gets a ConfigMap holding its message and status.phase Ready, in each cluster", async () => {
  await using env = await testEnv({ clusters: ["east", "west"], crds: [${n.kind}] });
  const namespace = await env.namespace();
  await env.run(${n.camel}Operator);
  for (const cluster of env.clusters) {
    const spec = { message: \`hello from \${cluster}\` };
    await env.client(cluster, ${n.kind}).create({ metadata: { name: "demo", namespace }, spec });
  }
  for (const cluster of env.clusters) {
    const configMap = await eventually(
      () => env.client(cluster, kinds.ConfigMap).find({ namespace, name: "demo" }),
      { timeoutMs: 30_000, what: \`the ConfigMap in \${cluster}\` },
    );
    assert.equal(configMap.data?.message, \`hello from \${cluster}\`);
    await eventually(
      async () => (await env.client(cluster, ${n.kind}).get({ namespace, name: "demo" })).status?.phase === "Ready",
      { timeoutMs: 30_000, what: \`status.phase Ready in \${cluster}\` },
    );
  }
});
`;
}

function kustomization(n: InitNames): string {
  return `# The ${n.kind} operator in one cluster: \`deno task crd > deploy/crd.yaml && kubectl apply -k deploy/\`.
# More clusters: a kubeconfig Secret per remote cluster and --clusters (see operator-hub's docs/clusters.md).
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
namespace: ${n.project}
resources:
  - crd.yaml
  - rbac.yaml
  - deployment.yaml
images:
  - name: ${n.project}
    newName: ${n.project}
    newTag: 0.1.0
`;
}

function rbac(n: InitNames): string {
  return `# Exactly what the ${n.kind} operator does, as the hub's pre-flight checks it at start (/status names what is missing).
apiVersion: v1
kind: Namespace
metadata:
  name: ${n.project}
---
apiVersion: v1
kind: ServiceAccount
metadata:
  name: ${n.project}
  namespace: ${n.project}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: ${n.project}
rules:
  # The watch cache and the re-read after a write conflict.
  - apiGroups: [${JSON.stringify(n.group)}]
    resources: [${JSON.stringify(n.plural)}]
    verbs: ["get", "list", "watch"]
  # One status write per pass (add patch of ${n.plural} itself with a delete handler: its finalizer).
  - apiGroups: [${JSON.stringify(n.group)}]
    resources: [${JSON.stringify(`${n.plural}/status`)}]
    verbs: ["patch"]
  # adopt() sets blockOwnerDeletion on the ConfigMap's owner reference: where the OwnerReferencesPermissionEnforcement
  # admission plugin is on (OpenShift), that needs update of the parent's finalizers.
  - apiGroups: [${JSON.stringify(n.group)}]
    resources: [${JSON.stringify(`${n.plural}/finalizers`)}]
    verbs: ["update"]
  # The owned ConfigMaps (listed and watched by the parent's label only).
  - apiGroups: [""]
    resources: ["configmaps"]
    verbs: ["get", "list", "watch", "create", "patch"]
  # Kubernetes Events about ${n.plural}.
  - apiGroups: [""]
    resources: ["events"]
    verbs: ["create", "patch"]
  # The pre-flight asks the API server what this identity may do.
  - apiGroups: ["authorization.k8s.io"]
    resources: ["selfsubjectaccessreviews", "selfsubjectrulesreviews"]
    verbs: ["create"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: ${n.project}
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: ${n.project}
subjects:
  - kind: ServiceAccount
    name: ${n.project}
    namespace: ${n.project}
`;
}

function deployment(n: InitNames): string {
  return `# The hub with the ${n.kind} operator, in its own cluster (add remote clusters with --clusters and a kubeconfig Secret).
apiVersion: apps/v1
kind: Deployment
metadata:
  name: ${n.project}
  namespace: ${n.project}
  labels:
    app.kubernetes.io/name: ${n.project}
spec:
  replicas: 1
  selector:
    matchLabels:
      app.kubernetes.io/name: ${n.project}
  template:
    metadata:
      labels:
        app.kubernetes.io/name: ${n.project}
    spec:
      serviceAccountName: ${n.project}
      securityContext:
        runAsNonRoot: true
        runAsUser: 1993
        seccompProfile:
          type: RuntimeDefault
      containers:
        - name: hub
          image: ${n.project}
          args: ["--clusters", "in-cluster", "--liveness", "http://0.0.0.0:8080/healthz"]
          ports:
            - name: health
              containerPort: 8080
          livenessProbe:
            httpGet: { path: /healthz, port: health }
            periodSeconds: 10
          readinessProbe:
            httpGet: { path: /readyz, port: health }
            periodSeconds: 5
          securityContext:
            allowPrivilegeEscalation: false
            capabilities:
              drop: ["ALL"]
          resources:
            requests: { cpu: 50m, memory: 128Mi }
            limits: { memory: 512Mi }
`;
}

function dockerfile(n: InitNames): string {
  return `# The ${n.project} image: \`docker build -t ${n.project}:0.1.0 .\`. It needs \`@operator-hub/hub\` from JSR
# (a \`links\` entry in deno.json points outside the build context: delete it once the package is published).
FROM denoland/deno:2.9.6
WORKDIR /app
COPY deno.json deno.lock ./
RUN deno install --frozen
COPY . .
RUN deno cache main.ts ${n.snake}_operator.ts
USER deno
ENTRYPOINT ["deno", "run", "--cached-only", "--allow-net", "--allow-read", "--allow-env", "--allow-run", \\
  "--allow-sys=hostname", "main.ts", "--operators", "none", "${n.snake}_operator.ts"]
`;
}

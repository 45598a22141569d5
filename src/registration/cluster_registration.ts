// cluster:add and cluster:remove: prepare a target cluster for the hub, mint its token, write the registration.

import { join } from "node:path";
import { parseAllDocuments, stringify as toYaml } from "yaml";
import { type ClusterAccess, KubeClient } from "../kube/mod.ts";
import {
  applyOwned,
  deleteIgnoringMissing,
  FIELD_MANAGER,
  getOrUndefined,
  listOrEmpty,
  MANAGED_BY,
  MANAGED_BY_LABEL,
  type Obj,
  PATHS,
  RegistrationError,
} from "./_objects.ts";
import { mirrorRoleDocuments, purgeMirrorRoles, requireNamespaces } from "./_mirror_roles.ts";

export { MANAGED_BY, MANAGED_BY_LABEL, RegistrationError };

/** Token anchors and registration Secrets name the cluster they belong to. */
export const CLUSTER_LABEL = "operator-hub.demo.operator/cluster";
/** multicluster-runtime's kubeconfig Secret label (value `"true"`), as the hub's --cluster-secrets watches. */
export const KUBECONFIG_SECRET_LABEL = "sigs.k8s.io/multicluster-runtime-kubeconfig";
/** The ServiceAccount deploy/cluster/ defines: the hub's identity in every cluster. */
const HUB_NAMESPACE = "operator-hub";
const HUB_SERVICE_ACCOUNT = "operator-hub";

/** Where the registration goes: a Secret in the hub's cluster, or a file in the cluster folder. */
export type RegistrationTarget =
  | { kind: "secret"; hub: ClusterAccess; namespace: string }
  | { kind: "file"; dir: string };

export interface AddOptions {
  /** The cluster to register. */
  target: ClusterAccess;
  /** The cluster's name at the hub (default: the context's name). */
  name: string;
  registration: RegistrationTarget;
  /** A TokenRequest of this many seconds; undefined with `nonExpiring`. */
  tokenTtlSeconds?: number;
  /** A `kubernetes.io/service-account-token` Secret instead (filled by kube-controller-manager). */
  nonExpiring?: boolean;
  dryRun?: boolean;
  /**
   * Namespaces the Mirror operator may read and write Secrets and ConfigMaps in, in this cluster: a Role there each
   * (deploy/mirror/namespace/). Default none: the hub gets the Uuid operator's rights only.
   */
  mirrorNamespaces?: readonly string[];
  /** Old tokens are revoked this long after the new one is registered, so the hub switches first. Default 5 s. */
  revokeAfterMs?: number;
  /** The repository root (crds/, deploy/cluster/). */
  root: string;
  print(line: string): void;
}

export interface RemoveOptions {
  name: string;
  registration: RegistrationTarget;
  /** With --purge: the registered cluster, where every object `add` created is deleted. */
  purge?: ClusterAccess;
  dryRun?: boolean;
  print(line: string): void;
}

/**
 * Registers `target` with the hub.
 *
 * Guarantees: idempotent: the CRDs and the least-privilege ServiceAccount, ClusterRole and binding of deploy/cluster/
 * are applied server-side (objects that existed before are updated but never labelled, so `--purge` leaves them);
 * every run mints a fresh token, writes the registration, and then revokes the tokens of earlier runs (their anchor
 * Secrets are deleted, which invalidates TokenRequest tokens bound to them), so a re-run is a credential rotation.
 * With `dryRun` nothing is written: each step is printed as "would …". Credentials are never printed.
 */
export async function addCluster(o: AddOptions): Promise<void> {
  const client = kubeClient(o.target, "add");
  const verb = o.dryRun ? "would apply" : "applied";
  try {
    const mirrorNamespaces = o.mirrorNamespaces ?? [];
    await requireNamespaces(client, mirrorNamespaces, o.target.name);
    for (const doc of [...await installDocuments(o.root), ...await mirrorRoleDocuments(o.root, mirrorNamespaces)]) {
      const result = await applyOwned(client, doc, o.dryRun === true);
      o.print(`${verb} ${doc.kind} ${qualified(doc)} in "${o.target.name}" (${result})`);
    }
    const anchorsBefore = await listAnchors(client, o.name);
    let token: string | undefined;
    let anchorName: string | undefined;
    if (o.nonExpiring) {
      token = await legacyToken(client, o);
    } else {
      const ttl = o.tokenTtlSeconds ?? 365 * 24 * 3600;
      anchorName = `operator-hub-token-${o.name}-${crypto.randomUUID().slice(0, 8)}`.slice(0, 253);
      if (o.dryRun) {
        o.print(
          `would create Secret ${HUB_NAMESPACE}/${anchorName} in "${o.target.name}" and request a token of ` +
            `ServiceAccount ${HUB_NAMESPACE}/${HUB_SERVICE_ACCOUNT} bound to it (${formatTtl(ttl)})`,
        );
      } else {
        const anchor = await client.request<Obj>("POST", `/api/v1/namespaces/${HUB_NAMESPACE}/secrets`, {
          body: {
            apiVersion: "v1",
            kind: "Secret",
            metadata: {
              name: anchorName,
              namespace: HUB_NAMESPACE,
              labels: { [MANAGED_BY_LABEL]: MANAGED_BY, [CLUSTER_LABEL]: o.name },
              annotations: { "operator-hub.demo.operator/purpose": "deleting this Secret revokes the hub's token" },
            },
            type: "Opaque",
          },
        });
        const tr = await client.request<Obj>(
          "POST",
          `/api/v1/namespaces/${HUB_NAMESPACE}/serviceaccounts/${HUB_SERVICE_ACCOUNT}/token`,
          {
            body: {
              apiVersion: "authentication.k8s.io/v1",
              kind: "TokenRequest",
              spec: {
                expirationSeconds: ttl,
                boundObjectRef: { apiVersion: "v1", kind: "Secret", name: anchorName, uid: anchor.metadata.uid },
              },
            },
          },
        );
        token = String(tr.status?.token ?? "");
        if (!token) throw new RegistrationError(`the TokenRequest in "${o.target.name}" returned no token`);
        o.print(
          `created Secret ${HUB_NAMESPACE}/${anchorName} in "${o.target.name}" and a token bound to it, valid until ${
            tr.status?.expirationTimestamp ?? "?"
          }`,
        );
      }
    }
    const kubeconfig = await kubeconfigFor(o.target, o.name, token ?? "<token>");
    await writeRegistration(o.registration, o.name, kubeconfig, o.dryRun === true, o.print);
    const old = anchorsBefore.filter((a) => a !== anchorName);
    if (old.length > 0) {
      if (o.dryRun) {
        o.print(`would revoke ${old.length} earlier token(s): delete Secret ${old.join(", ")} in "${o.target.name}"`);
      } else {
        // The hub re-reads credentials within about a second of the registration changing; give it time first.
        await new Promise((r) => setTimeout(r, o.revokeAfterMs ?? 5_000));
        for (const a of old) await deleteIgnoringMissing(client, `/api/v1/namespaces/${HUB_NAMESPACE}/secrets/${a}`);
        o.print(`revoked ${old.length} earlier token(s): deleted Secret ${old.join(", ")} in "${o.target.name}"`);
      }
    }
  } finally {
    client.close();
  }
}

/**
 * Unregisters `name`: deletes its registration Secret or file; with `purge`, also every object `cluster:add` created
 * in the cluster (token anchors, the ServiceAccount's namespace, ClusterRole, binding, and CRDs it created).
 */
export async function removeCluster(o: RemoveOptions): Promise<void> {
  const would = o.dryRun ? "would delete" : "deleted";
  const reg = o.registration;
  if (reg.kind === "file") {
    const path = join(reg.dir, `${o.name}.yaml`);
    try {
      if (!o.dryRun) await Deno.remove(path);
      else await Deno.stat(path);
      o.print(`${would} ${path}`);
    } catch (err) {
      if (!(err instanceof Deno.errors.NotFound)) throw err;
      o.print(`no registration file ${path}`);
    }
  } else {
    const client = kubeClient(reg.hub, "remove");
    try {
      const path = `/api/v1/namespaces/${reg.namespace}/secrets/${o.name}`;
      const found = await getOrUndefined(client, path);
      if (!found) o.print(`no registration Secret ${reg.namespace}/${o.name} in "${reg.hub.name}"`);
      else if (found.metadata?.labels?.[KUBECONFIG_SECRET_LABEL] !== "true") {
        throw new RegistrationError(
          `Secret ${reg.namespace}/${o.name} in "${reg.hub.name}" is not a cluster registration (no ${KUBECONFIG_SECRET_LABEL}=true label); left alone`,
        );
      } else {
        if (!o.dryRun) await deleteIgnoringMissing(client, path);
        o.print(`${would} Secret ${reg.namespace}/${o.name} in "${reg.hub.name}"`);
      }
    } finally {
      client.close();
    }
  }
  if (!o.purge) return;
  const client = kubeClient(o.purge, "remove");
  try {
    await purgeMirrorRoles(client, { dryRun: o.dryRun, cluster: o.purge.name, print: o.print });
    for (const a of await listAnchors(client, o.name)) {
      if (!o.dryRun) await deleteIgnoringMissing(client, `/api/v1/namespaces/${HUB_NAMESPACE}/secrets/${a}`);
      o.print(`${would} Secret ${HUB_NAMESPACE}/${a} in "${o.purge.name}" (its token is revoked)`);
    }
    const selector = `${MANAGED_BY_LABEL}=${MANAGED_BY}`;
    // Cluster-scoped objects last-created-first; the namespace takes the ServiceAccount and token Secrets with it.
    for (
      const [kind, base] of [
        ["ClusterRoleBinding", "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings"],
        ["ClusterRole", "/apis/rbac.authorization.k8s.io/v1/clusterroles"],
        ["ServiceAccount", `/api/v1/namespaces/${HUB_NAMESPACE}/serviceaccounts`],
        ["Secret", `/api/v1/namespaces/${HUB_NAMESPACE}/secrets`],
        ["Namespace", "/api/v1/namespaces"],
        ["CustomResourceDefinition", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"],
      ] as const
    ) {
      const list = await listOrEmpty(client, base, selector);
      for (const item of list) {
        if (!o.dryRun) await deleteIgnoringMissing(client, `${base}/${item.metadata.name}`);
        o.print(`${would} ${kind} ${item.metadata.name} in "${o.purge.name}"`);
      }
    }
  } finally {
    client.close();
  }
}

/**
 * What `cluster:add` installs: the CRDs of crds/ and the hub's identity and ClusterRole of deploy/cluster/ (the Uuid
 * operator's rights only; the Mirror operator's come from {@linkcode mirrorRoleDocuments} when asked).
 */
async function installDocuments(root: string): Promise<Obj[]> {
  const docs: Obj[] = [];
  const read = async (dir: string, skip: (f: string) => boolean) => {
    const files: string[] = [];
    for await (const e of Deno.readDir(join(root, dir))) {
      if (e.isFile && e.name.endsWith(".yaml") && !skip(e.name)) files.push(e.name);
    }
    for (const f of files.sort()) {
      for (const d of parseAllDocuments(await Deno.readTextFile(join(root, dir, f)))) {
        const obj = d.toJSON() as Obj | null;
        if (obj?.kind) docs.push(obj);
      }
    }
  };
  await read("crds", () => false);
  await read("deploy/cluster", (f) => f === "kustomization.yaml" || f === "crd.yaml");
  const order = ["Namespace", "CustomResourceDefinition", "ServiceAccount", "ClusterRole", "ClusterRoleBinding"];
  return docs.sort((a, b) => order.indexOf(a.kind) - order.indexOf(b.kind));
}

async function listAnchors(client: KubeClient, name: string): Promise<string[]> {
  const items = await listOrEmpty(
    client,
    `/api/v1/namespaces/${HUB_NAMESPACE}/secrets`,
    `${MANAGED_BY_LABEL}=${MANAGED_BY},${CLUSTER_LABEL}=${name}`,
  );
  return items.filter((i) => i.type === "Opaque").map((i) => i.metadata.name).sort();
}

/** The non-expiring token Secret of deploy/remote/, filled in by kube-controller-manager's token controller. */
async function legacyToken(client: KubeClient, o: AddOptions): Promise<string | undefined> {
  const name = "operator-hub-token";
  const doc = {
    apiVersion: "v1",
    kind: "Secret",
    metadata: {
      name,
      namespace: HUB_NAMESPACE,
      annotations: { "kubernetes.io/service-account.name": HUB_SERVICE_ACCOUNT },
    },
    type: "kubernetes.io/service-account-token",
  };
  const result = await applyOwned(client, doc, o.dryRun === true);
  o.print(`${o.dryRun ? "would apply" : "applied"} Secret ${HUB_NAMESPACE}/${name} (non-expiring token, ${result})`);
  if (o.dryRun) return undefined;
  for (let i = 0; i < 100; i++) {
    const s = await client.request<Obj>("GET", PATHS.Secret(name, HUB_NAMESPACE));
    if (s.data?.token) return new TextDecoder().decode(Uint8Array.from(atob(s.data.token), (c) => c.charCodeAt(0)));
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new RegistrationError(
    `Secret ${HUB_NAMESPACE}/${name} in "${o.target.name}" got no token within 10 s: the cluster's token controller ` +
      `(kube-controller-manager) does not fill it; use --token-ttl instead of --non-expiring`,
  );
}

/** A kubeconfig with one context named `name`: the target's server and CA, the new token. */
async function kubeconfigFor(target: ClusterAccess, name: string, token: string): Promise<string> {
  const auth = await target.auth();
  const cluster: Obj = { server: target.server };
  if (auth.caCerts?.length) cluster["certificate-authority-data"] = btoa(auth.caCerts.join("\n"));
  if (auth.insecureSkipTlsVerify) cluster["insecure-skip-tls-verify"] = true;
  if (target.proxyUrl) cluster["proxy-url"] = target.proxyUrl;
  return toYaml({
    apiVersion: "v1",
    kind: "Config",
    clusters: [{ name, cluster }],
    users: [{ name: `operator-hub@${name}`, user: { token } }],
    contexts: [{ name, context: { cluster: name, user: `operator-hub@${name}` } }],
    "current-context": name,
  });
}

async function writeRegistration(
  reg: RegistrationTarget,
  name: string,
  kubeconfig: string,
  dryRun: boolean,
  print: (line: string) => void,
): Promise<void> {
  if (reg.kind === "file") {
    const path = join(reg.dir, `${name}.yaml`);
    if (dryRun) return print(`would write ${path} (mode 0600; the hub's folder provider registers "${name}")`);
    await Deno.mkdir(reg.dir, { recursive: true });
    // Written next to it under a dot-name (which the folder provider skips), then renamed: never read half-written.
    const tmp = join(reg.dir, `.${name}.yaml.tmp`);
    await Deno.writeTextFile(tmp, kubeconfig, { mode: 0o600 });
    await Deno.rename(tmp, path);
    return print(`wrote ${path}`);
  }
  const client = kubeClient(reg.hub, "add");
  try {
    const ns = await getOrUndefined(client, `/api/v1/namespaces/${reg.namespace}`);
    if (!ns) {
      throw new RegistrationError(
        `namespace "${reg.namespace}" does not exist in hub cluster "${reg.hub.name}": deploy the hub there ` +
          `(kubectl apply -k deploy/) or pass the namespace its --cluster-secrets watches with --secret-namespace`,
      );
    }
    const path = PATHS.Secret(name, reg.namespace);
    const existing = await getOrUndefined(client, path);
    if (existing && existing.metadata?.labels?.[KUBECONFIG_SECRET_LABEL] !== "true") {
      throw new RegistrationError(
        `Secret ${reg.namespace}/${name} already exists in "${reg.hub.name}" and is not a cluster registration; ` +
          `choose another --name`,
      );
    }
    if (dryRun) {
      return print(
        `would ${existing ? "update" : "create"} Secret ${reg.namespace}/${name} in hub cluster "${reg.hub.name}" ` +
          `(label ${KUBECONFIG_SECRET_LABEL}=true, data key kubeconfig)`,
      );
    }
    await client.request("PATCH", path, {
      query: { fieldManager: FIELD_MANAGER, force: true },
      contentType: "application/apply-patch+yaml",
      body: JSON.stringify({
        apiVersion: "v1",
        kind: "Secret",
        metadata: {
          name,
          namespace: reg.namespace,
          labels: { [KUBECONFIG_SECRET_LABEL]: "true", [MANAGED_BY_LABEL]: MANAGED_BY, [CLUSTER_LABEL]: name },
        },
        type: "Opaque",
        data: { kubeconfig: btoa(String.fromCharCode(...new TextEncoder().encode(kubeconfig))) },
      }),
    });
    print(`${existing ? "updated" : "created"} Secret ${reg.namespace}/${name} in hub cluster "${reg.hub.name}"`);
  } finally {
    client.close();
  }
}

function kubeClient(access: ClusterAccess, what: string): KubeClient {
  return new KubeClient(access, { userAgent: `operator-hub/cluster-${what}`, requestTimeoutMs: 30_000 });
}

function qualified(doc: Obj): string {
  return doc.metadata.namespace ? `${doc.metadata.namespace}/${doc.metadata.name}` : doc.metadata.name;
}

function formatTtl(seconds: number): string {
  return seconds % 3600 === 0 ? `${seconds / 3600}h` : `${seconds}s`;
}

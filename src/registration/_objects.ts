// Kubernetes objects for cluster:add / cluster:remove: paths by kind, server-side apply with ownership, tolerant reads.

import { ApiError, type KubeClient } from "../kube/mod.ts";

/** Every object `cluster:add` created carries this label (value below), so `cluster:remove --purge` finds them. */
export const MANAGED_BY_LABEL = "app.kubernetes.io/managed-by";
export const MANAGED_BY = "operator-hub-cluster-add";
export const FIELD_MANAGER = "operator-hub-cluster-add";

/** A bad request or a failed step: the CLI prints the message on one line (exit 2 for bad input, 1 otherwise). */
export class RegistrationError extends Error {
  override name = "RegistrationError";
}

// deno-lint-ignore no-explicit-any
export type Obj = Record<string, any>;

export const PATHS: Record<string, (name: string, ns?: string) => string> = {
  Namespace: (n) => `/api/v1/namespaces/${n}`,
  ServiceAccount: (n, ns) => `/api/v1/namespaces/${ns}/serviceaccounts/${n}`,
  Secret: (n, ns) => `/api/v1/namespaces/${ns}/secrets/${n}`,
  ClusterRole: (n) => `/apis/rbac.authorization.k8s.io/v1/clusterroles/${n}`,
  ClusterRoleBinding: (n) => `/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/${n}`,
  Role: (n, ns) => `/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}/roles/${n}`,
  RoleBinding: (n, ns) => `/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}/rolebindings/${n}`,
  CustomResourceDefinition: (n) => `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${n}`,
};

export function pathOf(doc: Obj): string {
  const p = PATHS[doc.kind];
  if (!p) throw new RegistrationError(`cannot install a ${doc.kind}: only ${Object.keys(PATHS).join(", ")}`);
  return p(doc.metadata.name, doc.metadata.namespace);
}

/**
 * Server-side apply. An object that did not exist is labelled as ours (so --purge deletes it); one that existed
 * without our label is updated but stays the user's.
 */
export async function applyOwned(client: KubeClient, doc: Obj, dryRun: boolean): Promise<string> {
  const path = pathOf(doc);
  const existing = await getOrUndefined(client, path);
  const ours = !existing || existing.metadata?.labels?.[MANAGED_BY_LABEL] === MANAGED_BY;
  const body = structuredClone(doc);
  if (ours) body.metadata.labels = { ...body.metadata.labels, [MANAGED_BY_LABEL]: MANAGED_BY };
  if (!dryRun) {
    await client.request("PATCH", path, {
      query: { fieldManager: FIELD_MANAGER, force: true },
      body: JSON.stringify(body),
      contentType: "application/apply-patch+yaml",
    });
    if (doc.kind === "CustomResourceDefinition") await waitEstablished(client, path);
  }
  return !existing ? "new" : ours ? "made by an earlier cluster:add" : "existed before: not ours, left out of --purge";
}

async function waitEstablished(client: KubeClient, path: string): Promise<void> {
  for (let i = 0; i < 100; i++) {
    const crd = await client.request<Obj>("GET", path);
    // deno-lint-ignore no-explicit-any
    if (crd.status?.conditions?.some((c: any) => c.type === "Established" && c.status === "True")) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new RegistrationError(`CustomResourceDefinition ${path.split("/").pop()} was not Established within 10 s`);
}

export async function getOrUndefined(client: KubeClient, path: string): Promise<Obj | undefined> {
  try {
    return await client.request<Obj>("GET", path);
  } catch (err) {
    if (err instanceof ApiError && err.status === 404) return undefined;
    throw err;
  }
}

export async function listOrEmpty(client: KubeClient, path: string, labelSelector: string): Promise<Obj[]> {
  try {
    const list = await client.request<Obj>("GET", path, { query: { labelSelector } });
    return list.items ?? [];
  } catch (err) {
    if (err instanceof ApiError && err.status === 404) return [];
    throw err;
  }
}

export async function deleteIgnoringMissing(client: KubeClient, path: string): Promise<void> {
  try {
    await client.request("DELETE", path, { discardBody: true });
  } catch (err) {
    if (!(err instanceof ApiError && err.status === 404)) throw err;
  }
}

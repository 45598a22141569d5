// Thousands of namespaced clusters on the local apiservers: one namespace per tenant context, round-robin over the
// running apiservers, and the kubeconfig that registers each one (the `operator-hub` extension, `scope: namespace`).

import { stringify as toYaml } from "yaml";
import { ClusterApi, ClusterApiError, localEndpoint } from "../../dev/support/cluster_api.ts";

/** The label every bench tenant namespace carries, so they can be listed and reused across runs. */
export const TENANT_LABEL = "operator-hub.bench/tenant";

/** Tenant `i` (0-based): its context name, namespace and apiserver. */
export interface Tenant {
  context: string;
  namespace: string;
  apiserver: string;
}

/** `n` tenants spread round-robin over `apiservers` (context `t00001` is on the first). */
export function tenants(n: number, apiservers: string[]): Tenant[] {
  return Array.from({ length: n }, (_, i) => {
    const id = String(i + 1).padStart(5, "0");
    return { context: `t${id}`, namespace: `bench-tenant-${id}`, apiserver: apiservers[i % apiservers.length] };
  });
}

/**
 * Creates the tenants' namespaces that do not exist yet (`concurrency` at a time per apiserver); returns the tenants
 * whose namespace it made (what the caller removes with removeTenantNamespaces when it is done).
 *
 * A namespace still terminating (a run just before removed it) does not count as existing: it is created again once the
 * apiserver has let it go, within `terminatingTimeoutMs`, so no run starts on namespaces about to disappear.
 */
export async function ensureTenantNamespaces(
  list: Tenant[],
  concurrency = 16,
  terminatingTimeoutMs = 180_000,
): Promise<Tenant[]> {
  const byServer = Map.groupBy(list, (t) => t.apiserver);
  const made: Tenant[] = [];
  await Promise.all([...byServer].map(async ([server, ts]) => {
    const api = new ClusterApi(localEndpoint(server));
    try {
      const existing = new Set<string>(
        (await api.request("GET", `/api/v1/namespaces?labelSelector=${TENANT_LABEL}`)).items
          .filter((n: { metadata: { deletionTimestamp?: string } }) => !n.metadata.deletionTimestamp)
          .map((n: { metadata: { name: string } }) => n.metadata.name),
      );
      const todo = ts.filter((t) => !existing.has(t.namespace));
      const deadline = performance.now() + terminatingTimeoutMs;
      let next = 0;
      const worker = async () => {
        while (next < todo.length) {
          const t = todo[next++];
          for (;;) {
            try {
              await api.request("POST", "/api/v1/namespaces", {
                apiVersion: "v1",
                kind: "Namespace",
                metadata: { name: t.namespace, labels: { [TENANT_LABEL]: "true" } },
              });
              made.push(t);
              break;
            } catch (err) {
              if (!(err instanceof ClusterApiError) || err.status !== 409) throw err;
              // Made meanwhile by someone else: theirs. Still terminating: wait until it is gone, then make it.
              const held = await api.request("GET", `/api/v1/namespaces/${t.namespace}`).catch(() => undefined);
              if (!held?.metadata?.deletionTimestamp) break;
              if (performance.now() > deadline) {
                throw new Error(
                  `namespace ${t.namespace} on ${server} still terminating after ${terminatingTimeoutMs} ms`,
                );
              }
              await new Promise((r) => setTimeout(r, 500));
            }
          }
        }
      };
      await Promise.all(Array.from({ length: concurrency }, worker));
    } finally {
      api.close();
    }
  }));
  return made;
}

/** One kubeconfig: a cluster and an admin user per apiserver, and one namespaced context per tenant. */
export function tenantKubeconfig(list: Tenant[]): string {
  const servers = [...new Set(list.map((t) => t.apiserver))];
  const eps = servers.map((s) => localEndpoint(s));
  return toYaml({
    apiVersion: "v1",
    kind: "Config",
    clusters: eps.map((ep) => ({
      name: ep.name,
      cluster: { server: ep.server, "certificate-authority-data": btoa(ep.caPem) },
    })),
    users: eps.map((ep) => ({ name: `${ep.name}-admin`, user: { token: ep.token } })),
    contexts: list.map((t) => ({
      name: t.context,
      context: {
        cluster: t.apiserver,
        user: `${t.apiserver}-admin`,
        namespace: t.namespace,
        extensions: [{ name: "operator-hub", extension: { scope: "namespace" } }],
      },
    })),
  });
}

/** Deletes the tenants' namespaces (`concurrency` at a time per apiserver; one already gone is fine). */
export async function removeTenantNamespaces(list: Tenant[], concurrency = 16): Promise<void> {
  const byServer = Map.groupBy(list, (t) => t.apiserver);
  await Promise.all([...byServer].map(async ([server, ts]) => {
    const api = new ClusterApi(localEndpoint(server));
    try {
      let next = 0;
      const worker = async () => {
        while (next < ts.length) {
          const t = ts[next++];
          try {
            await api.request("DELETE", `/api/v1/namespaces/${t.namespace}`);
          } catch (err) {
            if (!(err instanceof ClusterApiError) || err.status !== 404) throw err;
          }
        }
      };
      await Promise.all(Array.from({ length: concurrency }, worker));
    } finally {
      api.close();
    }
  }));
}

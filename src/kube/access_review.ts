// RBAC pre-flight: asks the API server which of the permissions the hub needs it lacks.

import type { KubeClient } from "./client.ts";

/** One permission, as a SelfSubjectAccessReview's resourceAttributes. */
export interface PermissionCheck {
  verb: string;
  /** API group; "" for the core group. */
  group: string;
  /** Plural resource name, e.g. `uuid`. */
  resource: string;
  subresource?: string;
  /** Omit for "in every namespace" (cluster-wide). */
  namespace?: string;
}

const SSAR_PATH = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews";

/**
 * Returns the checks the client's credentials are NOT allowed, in the order given.
 *
 * Guarantees: one SelfSubjectAccessReview per check, sent one after another over one keep-alive connection (sent
 * concurrently they opened a TLS connection each, per cluster, that then idled: thousands of clusters paid for
 * several idle TLS sessions each, and the API servers for several handshakes); an API or transport
 * failure rejects (it is not reported as "missing"), so a caller can tell "forbidden" from
 * "could not ask". Needs no RBAC itself: every authenticated user may create SSARs.
 */
export async function missingPermissions<C extends PermissionCheck>(
  client: KubeClient,
  checks: readonly C[],
  signal?: AbortSignal,
): Promise<C[]> {
  const allowed: boolean[] = [];
  for (const check of checks) {
    const review = await client.request<{ status?: { allowed?: boolean } }>("POST", SSAR_PATH, {
      body: {
        apiVersion: "authorization.k8s.io/v1",
        kind: "SelfSubjectAccessReview",
        spec: {
          resourceAttributes: {
            verb: check.verb,
            group: check.group,
            resource: check.resource,
            subresource: check.subresource || undefined,
            namespace: check.namespace || undefined,
          },
        },
      },
      signal,
    });
    allowed.push(review?.status?.allowed === true);
  }
  return checks.filter((_, i) => !allowed[i]);
}

/**
 * kubectl-style wording of a permission, e.g. `patch uuid/status.demo.operator` or
 * `list pods in namespace a`.
 */
export function describePermission(check: PermissionCheck): string {
  const resource = check.subresource ? `${check.resource}/${check.subresource}` : check.resource;
  const qualified = check.group ? `${resource}.${check.group}` : resource;
  return `${check.verb} ${qualified}${check.namespace ? ` in namespace ${check.namespace}` : ""}`;
}

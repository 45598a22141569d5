// RBAC pre-flight of a namespaced cluster: one SelfSubjectRulesReview for its namespace instead of one review per check.

import { missingPermissions, type PermissionCheck } from "./access_review.ts";
import type { KubeClient } from "./client.ts";

const SSRR_PATH = "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews";

/** One rule of a SelfSubjectRulesReview's `status.resourceRules`. */
export interface ResourceRule {
  verbs: string[];
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
}

/**
 * Like `missingPermissions`, for a cluster confined to `namespace`: one SelfSubjectRulesReview answers every check in
 * that namespace that its rules allow; only the others (and checks outside the namespace) are asked one by one with
 * SelfSubjectAccessReviews, so a cluster with every right costs one request instead of one per check.
 *
 * Guarantees: the answer is the same as `missingPermissions`'s: a rule that allows a check is authoritative (RBAC
 * only grants), and nothing is reported missing on the rules review's word alone: a check its rules do not allow
 * (an incomplete review, another authorizer, a rule the review cannot express) is confirmed by an access review.
 */
export async function missingPermissionsIn<C extends PermissionCheck>(
  client: KubeClient,
  namespace: string,
  checks: readonly C[],
  signal?: AbortSignal,
  /** Where the namespace's rules come from (e.g. one review shared by several operators); default `rulesReview`. */
  rulesOf: (signal?: AbortSignal) => Promise<ResourceRule[]> = (s) => rulesReview(client, namespace, s),
): Promise<C[]> {
  const inNamespace = checks.filter((c) => c.namespace === namespace);
  if (inNamespace.length < 2) return await missingPermissions(client, checks, signal);
  const rules = await rulesOf(signal);
  const unsure = checks.filter((c) => c.namespace !== namespace || !rules.some((r) => allows(r, c)));
  return await missingPermissions(client, unsure, signal);
}

/** One SelfSubjectRulesReview: the resource rules of the client's identity in `namespace`. */
export async function rulesReview(
  client: KubeClient,
  namespace: string,
  signal?: AbortSignal,
): Promise<ResourceRule[]> {
  const review = await client.request<{ status?: { resourceRules?: ResourceRule[] } }>("POST", SSRR_PATH, {
    body: {
      apiVersion: "authorization.k8s.io/v1",
      kind: "SelfSubjectRulesReview",
      spec: { namespace },
    },
    signal,
  });
  return review?.status?.resourceRules ?? [];
}

/** RBAC's own matching: verb, API group and resource (or `resource/subresource`), `*` wildcards, no resource names. */
export function allows(rule: ResourceRule, check: PermissionCheck): boolean {
  if (rule.resourceNames?.length) return false;
  if (!rule.verbs.includes("*") && !rule.verbs.includes(check.verb)) return false;
  const groups = rule.apiGroups ?? [];
  if (!groups.includes("*") && !groups.includes(check.group)) return false;
  const resources = rule.resources ?? [];
  if (resources.includes("*")) return true;
  if (!check.subresource) return resources.includes(check.resource);
  return resources.includes(`${check.resource}/${check.subresource}`) || resources.includes(`*/${check.subresource}`);
}

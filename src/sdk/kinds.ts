// The built-in Kubernetes kinds as ResourceTypes, so operators never spell out group, version, plural and scope.

import type { ResourceType } from "../kube/mod.ts";

const core = (kind: string, plural: string, namespaced = true): ResourceType =>
  Object.freeze({ group: "", version: "v1", kind, plural, namespaced });
const of = (group: string, version: string, kind: string, plural: string, namespaced = true): ResourceType =>
  Object.freeze({ group, version, kind, plural, namespaced });

/**
 * The name of a kind in {@link kinds}.
 *
 * @example
 * ```ts
 * import { type KindName, kinds } from "./kinds.ts";
 * const name: KindName = "Deployment";
 * console.log(kinds[name].plural); // "deployments"
 * ```
 */
export type KindName =
  | "Namespace"
  | "ConfigMap"
  | "Secret"
  | "Service"
  | "ServiceAccount"
  | "ResourceQuota"
  | "LimitRange"
  | "PersistentVolumeClaim"
  | "Pod"
  | "Deployment"
  | "StatefulSet"
  | "DaemonSet"
  | "Job"
  | "CronJob"
  | "Role"
  | "RoleBinding"
  | "ClusterRole"
  | "ClusterRoleBinding"
  | "NetworkPolicy"
  | "Ingress";

/**
 * Built-in kinds, each with its group, version, plural and scope (`namespaced: false` for the cluster-scoped ones:
 * Namespace, ClusterRole, ClusterRoleBinding), for `uses`, `owns`, `watches` and a handler's `clientFor`.
 *
 * Guarantees: the entries are frozen, and every one names the group version the local clusters serve (core/v1,
 * apps/v1, batch/v1, rbac.authorization.k8s.io/v1, networking.k8s.io/v1).
 *
 * @example
 * ```ts
 * import { kinds } from "./kinds.ts";
 * console.log(kinds.Deployment); // { group: "apps", version: "v1", kind: "Deployment", plural: "deployments", namespaced: true }
 * console.log(kinds.Namespace.namespaced); // false
 * ```
 */
export const kinds: Readonly<Record<KindName, ResourceType>> = Object.freeze({
  Namespace: core("Namespace", "namespaces", false),
  ConfigMap: core("ConfigMap", "configmaps"),
  Secret: core("Secret", "secrets"),
  Service: core("Service", "services"),
  ServiceAccount: core("ServiceAccount", "serviceaccounts"),
  ResourceQuota: core("ResourceQuota", "resourcequotas"),
  LimitRange: core("LimitRange", "limitranges"),
  PersistentVolumeClaim: core("PersistentVolumeClaim", "persistentvolumeclaims"),
  Pod: core("Pod", "pods"),
  Deployment: of("apps", "v1", "Deployment", "deployments"),
  StatefulSet: of("apps", "v1", "StatefulSet", "statefulsets"),
  DaemonSet: of("apps", "v1", "DaemonSet", "daemonsets"),
  Job: of("batch", "v1", "Job", "jobs"),
  CronJob: of("batch", "v1", "CronJob", "cronjobs"),
  Role: of("rbac.authorization.k8s.io", "v1", "Role", "roles"),
  RoleBinding: of("rbac.authorization.k8s.io", "v1", "RoleBinding", "rolebindings"),
  ClusterRole: of("rbac.authorization.k8s.io", "v1", "ClusterRole", "clusterroles", false),
  ClusterRoleBinding: of("rbac.authorization.k8s.io", "v1", "ClusterRoleBinding", "clusterrolebindings", false),
  NetworkPolicy: of("networking.k8s.io", "v1", "NetworkPolicy", "networkpolicies"),
  Ingress: of("networking.k8s.io", "v1", "Ingress", "ingresses"),
});

/** The catalogue entry whose `apiVersion` and `kind` these are; undefined for a kind it does not hold. */
export function kindOf(apiVersion: unknown, kind: unknown): ResourceType | undefined {
  const entry = (kinds as Record<string, ResourceType>)[String(kind)];
  if (!entry || typeof apiVersion !== "string") return entry;
  return apiVersion === (entry.group ? `${entry.group}/${entry.version}` : entry.version) ? entry : undefined;
}

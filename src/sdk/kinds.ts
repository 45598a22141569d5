// The built-in Kubernetes kinds as ResourceTypes, so operators never spell out group, version, plural and scope.

import type { ResourceType } from "../kube/mod.ts";
import type { StoredObject } from "../runtime/mod.ts";
// Type-only: the object types of kubernetes-models (JSON as the API server sends it, timestamps as strings); nothing
// of the package is loaded at run time.
import type { INamespace } from "kubernetes-models/v1/Namespace";
import type { IConfigMap } from "kubernetes-models/v1/ConfigMap";
import type { ISecret } from "kubernetes-models/v1/Secret";
import type { IService } from "kubernetes-models/v1/Service";
import type { IServiceAccount } from "kubernetes-models/v1/ServiceAccount";
import type { IResourceQuota } from "kubernetes-models/v1/ResourceQuota";
import type { ILimitRange } from "kubernetes-models/v1/LimitRange";
import type { IPersistentVolumeClaim } from "kubernetes-models/v1/PersistentVolumeClaim";
import type { IPod } from "kubernetes-models/v1/Pod";
import type { IDeployment } from "kubernetes-models/apps/v1/Deployment";
import type { IStatefulSet } from "kubernetes-models/apps/v1/StatefulSet";
import type { IDaemonSet } from "kubernetes-models/apps/v1/DaemonSet";
import type { IJob } from "kubernetes-models/batch/v1/Job";
import type { ICronJob } from "kubernetes-models/batch/v1/CronJob";
import type { IRole } from "kubernetes-models/rbac.authorization.k8s.io/v1/Role";
import type { IRoleBinding } from "kubernetes-models/rbac.authorization.k8s.io/v1/RoleBinding";
import type { IClusterRole } from "kubernetes-models/rbac.authorization.k8s.io/v1/ClusterRole";
import type { IClusterRoleBinding } from "kubernetes-models/rbac.authorization.k8s.io/v1/ClusterRoleBinding";
import type { INetworkPolicy } from "kubernetes-models/networking.k8s.io/v1/NetworkPolicy";
import type { IIngress } from "kubernetes-models/networking.k8s.io/v1/Ingress";

/**
 * A built-in kind's object as the hub's clients return it: the kubernetes-models type `I` (e.g. `IConfigMap`), with
 * `apiVersion` and `kind` optional (a watch cache's projection drops them) and `metadata` always there.
 *
 * @example
 * ```ts
 * import type { IConfigMap } from "kubernetes-models/v1/ConfigMap";
 * import type { KubeObject } from "./kinds.ts";
 * const cm: KubeObject<IConfigMap> = { metadata: { name: "site" }, data: { "index.html": "<h1>site</h1>" } };
 * console.log(cm.data?.["index.html"]);
 * ```
 */
export type KubeObject<I extends { apiVersion: string; kind: string }> =
  & Omit<I, "apiVersion" | "kind">
  & Partial<Pick<I, "apiVersion" | "kind">>
  & StoredObject;

const core = <I extends { apiVersion: string; kind: string }>(
  kind: string,
  plural: string,
  namespaced = true,
): ResourceType<KubeObject<I>> => Object.freeze({ group: "", version: "v1", kind, plural, namespaced });
const of = <I extends { apiVersion: string; kind: string }>(
  group: string,
  version: string,
  kind: string,
  plural: string,
  namespaced = true,
): ResourceType<KubeObject<I>> => Object.freeze({ group, version, kind, plural, namespaced });

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
 * The built-in kinds of {@link kinds}, each typed by its kubernetes-models object type. Left out of the generated
 * documentation (`@ignore`): documenting it would pull every kubernetes-models type into this package's docs.
 *
 * @ignore
 */
export interface Kinds {
  /** v1/Namespace */
  readonly Namespace: ResourceType<KubeObject<INamespace>>;
  /** v1/ConfigMap */
  readonly ConfigMap: ResourceType<KubeObject<IConfigMap>>;
  /** v1/Secret */
  readonly Secret: ResourceType<KubeObject<ISecret>>;
  /** v1/Service */
  readonly Service: ResourceType<KubeObject<IService>>;
  /** v1/ServiceAccount */
  readonly ServiceAccount: ResourceType<KubeObject<IServiceAccount>>;
  /** v1/ResourceQuota */
  readonly ResourceQuota: ResourceType<KubeObject<IResourceQuota>>;
  /** v1/LimitRange */
  readonly LimitRange: ResourceType<KubeObject<ILimitRange>>;
  /** v1/PersistentVolumeClaim */
  readonly PersistentVolumeClaim: ResourceType<KubeObject<IPersistentVolumeClaim>>;
  /** v1/Pod */
  readonly Pod: ResourceType<KubeObject<IPod>>;
  /** apps/v1/Deployment */
  readonly Deployment: ResourceType<KubeObject<IDeployment>>;
  /** apps/v1/StatefulSet */
  readonly StatefulSet: ResourceType<KubeObject<IStatefulSet>>;
  /** apps/v1/DaemonSet */
  readonly DaemonSet: ResourceType<KubeObject<IDaemonSet>>;
  /** batch/v1/Job */
  readonly Job: ResourceType<KubeObject<IJob>>;
  /** batch/v1/CronJob */
  readonly CronJob: ResourceType<KubeObject<ICronJob>>;
  /** rbac.authorization.k8s.io/v1/Role */
  readonly Role: ResourceType<KubeObject<IRole>>;
  /** rbac.authorization.k8s.io/v1/RoleBinding */
  readonly RoleBinding: ResourceType<KubeObject<IRoleBinding>>;
  /** rbac.authorization.k8s.io/v1/ClusterRole */
  readonly ClusterRole: ResourceType<KubeObject<IClusterRole>>;
  /** rbac.authorization.k8s.io/v1/ClusterRoleBinding */
  readonly ClusterRoleBinding: ResourceType<KubeObject<IClusterRoleBinding>>;
  /** networking.k8s.io/v1/NetworkPolicy */
  readonly NetworkPolicy: ResourceType<KubeObject<INetworkPolicy>>;
  /** networking.k8s.io/v1/Ingress */
  readonly Ingress: ResourceType<KubeObject<IIngress>>;
}

/**
 * Built-in kinds, each with its group, version, plural and scope (`namespaced: false` for the cluster-scoped ones:
 * Namespace, ClusterRole, ClusterRoleBinding), for `uses`, `owns`, `watches` and a handler's `clientFor`; each carries
 * its object type, so `clientFor(kinds.ConfigMap).get(ref)` resolves with a ConfigMap (`data` is a
 * `Record<string, string> | undefined`).
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
export const kinds: Kinds = Object.freeze({
  Namespace: core<INamespace>("Namespace", "namespaces", false),
  ConfigMap: core<IConfigMap>("ConfigMap", "configmaps"),
  Secret: core<ISecret>("Secret", "secrets"),
  Service: core<IService>("Service", "services"),
  ServiceAccount: core<IServiceAccount>("ServiceAccount", "serviceaccounts"),
  ResourceQuota: core<IResourceQuota>("ResourceQuota", "resourcequotas"),
  LimitRange: core<ILimitRange>("LimitRange", "limitranges"),
  PersistentVolumeClaim: core<IPersistentVolumeClaim>("PersistentVolumeClaim", "persistentvolumeclaims"),
  Pod: core<IPod>("Pod", "pods"),
  Deployment: of<IDeployment>("apps", "v1", "Deployment", "deployments"),
  StatefulSet: of<IStatefulSet>("apps", "v1", "StatefulSet", "statefulsets"),
  DaemonSet: of<IDaemonSet>("apps", "v1", "DaemonSet", "daemonsets"),
  Job: of<IJob>("batch", "v1", "Job", "jobs"),
  CronJob: of<ICronJob>("batch", "v1", "CronJob", "cronjobs"),
  Role: of<IRole>("rbac.authorization.k8s.io", "v1", "Role", "roles"),
  RoleBinding: of<IRoleBinding>("rbac.authorization.k8s.io", "v1", "RoleBinding", "rolebindings"),
  ClusterRole: of<IClusterRole>("rbac.authorization.k8s.io", "v1", "ClusterRole", "clusterroles", false),
  ClusterRoleBinding: of<IClusterRoleBinding>(
    "rbac.authorization.k8s.io",
    "v1",
    "ClusterRoleBinding",
    "clusterrolebindings",
    false,
  ),
  NetworkPolicy: of<INetworkPolicy>("networking.k8s.io", "v1", "NetworkPolicy", "networkpolicies"),
  Ingress: of<IIngress>("networking.k8s.io", "v1", "Ingress", "ingresses"),
});

/** The catalogue entry whose `apiVersion` and `kind` these are; undefined for a kind it does not hold. */
export function kindOf(apiVersion: unknown, kind: unknown): ResourceType | undefined {
  const all: Readonly<Record<string, ResourceType | undefined>> = kinds as Readonly<Record<KindName, ResourceType>>;
  const entry = Object.hasOwn(all, String(kind)) ? all[String(kind)] : undefined;
  if (!entry || typeof apiVersion !== "string") return entry;
  return apiVersion === (entry.group ? `${entry.group}/${entry.version}` : entry.version) ? entry : undefined;
}

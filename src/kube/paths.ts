// Builds API server URL paths for resources, namespaces and subresources.

/**
 * Identifies a resource collection or object. An empty `group` is the core API (`/api/v1`).
 *
 * @example
 * ```ts
 * import { resourcePath, type ResourceRef } from "../../kube.ts";
 *
 * const status: ResourceRef = {
 *   group: "apps",
 *   version: "v1",
 *   plural: "deployments",
 *   namespace: "shop",
 *   name: "web",
 *   subresource: "status",
 * };
 * console.log(resourcePath(status)); // "/apis/apps/v1/namespaces/shop/deployments/web/status"
 * ```
 */
export interface ResourceRef {
  /** The API group; "" for the core API. */
  group: string;
  /** The API version, e.g. `v1`. */
  version: string;
  /** The resource's plural name, e.g. `configmaps`. */
  plural: string;
  /** Omit for cluster-scoped resources, or to address every namespace. */
  namespace?: string;
  /** The object's name; omit to address the collection. */
  name?: string;
  /** E.g. `status`; requires `name`. */
  subresource?: string;
}

/**
 * `resourcePath({ group: "demo.operator", version: "v1", plural: "uuid", namespace: "a", name: "x", subresource: "status" })`
 * is `/apis/demo.operator/v1/namespaces/a/uuid/x/status`. Segments are URL-encoded.
 *
 * @example
 * ```ts
 * import { resourcePath } from "../../kube.ts";
 *
 * const configMaps = { group: "", version: "v1", plural: "configmaps" };
 * console.log(resourcePath(configMaps)); // "/api/v1/configmaps" (every namespace)
 * const site = resourcePath({ ...configMaps, namespace: "shop", name: "site" });
 * console.log(site); // "/api/v1/namespaces/shop/configmaps/site"
 * ```
 */
export function resourcePath(ref: ResourceRef): string {
  if (!ref.version || !ref.plural) throw new TypeError("resourcePath needs a version and a plural");
  if (ref.subresource && !ref.name) {
    throw new TypeError(`resourcePath: subresource "${ref.subresource}" needs an object name`);
  }
  const base = ref.group ? `/apis/${seg(ref.group)}/${seg(ref.version)}` : `/api/${seg(ref.version)}`;
  let path = base;
  if (ref.namespace) path += `/namespaces/${seg(ref.namespace)}`;
  path += `/${seg(ref.plural)}`;
  if (ref.name) path += `/${seg(ref.name)}`;
  if (ref.subresource) path += `/${seg(ref.subresource)}`;
  return path;
}

/**
 * The path of a Namespace object, or of the namespace collection when `name` is omitted.
 *
 * @example
 * ```ts
 * import { namespacePath } from "../../kube.ts";
 *
 * console.log(namespacePath()); // "/api/v1/namespaces"
 * console.log(namespacePath("shop")); // "/api/v1/namespaces/shop"
 * ```
 */
export function namespacePath(name?: string): string {
  return resourcePath({ group: "", version: "v1", plural: "namespaces", name });
}

function seg(s: string): string {
  return encodeURIComponent(s);
}

/**
 * A kind of object the hub watches or writes: its API group ("" for the core group), version,
 * kind and plural resource name. `namespaced` defaults to true.
 *
 * `T` is the type of its objects, carried by the type-only `"~object"` field: `kinds.ConfigMap` and a resource made
 * by `defineResource` carry theirs, so a client or handler of them is typed; a plain `{ group, version, kind, plural }`
 * carries none (`unknown`), and its objects are untyped.
 *
 * @example
 * ```ts
 * import { qualifiedName, type ResourceType } from "../../kube.ts";
 *
 * interface Website {
 *   metadata: { name: string };
 *   spec: { domain: string };
 * }
 * const websites: ResourceType<Website> = {
 *   group: "demo.example.com",
 *   version: "v1",
 *   kind: "Website",
 *   plural: "websites",
 * };
 * console.log(qualifiedName(websites)); // "websites.demo.example.com"
 * ```
 */
export interface ResourceType<T = unknown> {
  /** API group, e.g. `demo.operator`; "" for the core group. */
  group: string;
  /** API version, e.g. `v1`. */
  version: string;
  /** Kind, e.g. `Uuid`. */
  kind: string;
  /** Plural resource name, as in URLs and RBAC rules, e.g. `uuid`. */
  plural: string;
  /** False for cluster-scoped resources. Default true. */
  namespaced?: boolean;
  /** Type-only: the type of this kind's objects (never set at run time). */
  readonly "~object"?: T;
}

/**
 * `group/version`, or `version` for the core group: an object's `apiVersion`.
 *
 * @example
 * ```ts
 * import { apiVersionOf } from "../../kube.ts";
 *
 * const configMaps = { group: "", version: "v1", kind: "ConfigMap", plural: "configmaps" };
 * const deployments = { group: "apps", version: "v1", kind: "Deployment", plural: "deployments" };
 * console.log(apiVersionOf(configMaps), apiVersionOf(deployments)); // "v1" "apps/v1"
 * const site = { apiVersion: apiVersionOf(configMaps), kind: configMaps.kind, metadata: { name: "site" } };
 * ```
 */
export function apiVersionOf(type: ResourceType): string {
  return type.group ? `${type.group}/${type.version}` : type.version;
}

/**
 * `plural.group` (kubectl's fully qualified resource name), or `plural` for the core group.
 *
 * @example
 * ```ts
 * import { qualifiedName } from "../../kube.ts";
 *
 * const websites = { group: "demo.example.com", version: "v1", kind: "Website", plural: "websites" };
 * console.log(`kubectl get ${qualifiedName(websites)}`); // "kubectl get websites.demo.example.com"
 * ```
 */
export function qualifiedName(type: ResourceType): string {
  return type.group ? `${type.plural}.${type.group}` : type.plural;
}

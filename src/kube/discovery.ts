// Discovery: whether a cluster serves a resource, and whether it has a status subresource.

import { ApiError, httpStatusOf } from "./errors.ts";
import { apiVersionOf, qualifiedName, type ResourceType } from "./paths.ts";

/**
 * What discovery learned about one resource in one cluster.
 *
 * @example
 * ```ts
 * import { discoverResource, type KubeClient, resourcePath, type ResourceInfo } from "../../kube.ts";
 *
 * declare const client: KubeClient;
 * const websites = { group: "demo.example.com", version: "v1", kind: "Website", plural: "websites" };
 * const info: ResourceInfo = await discoverResource(client, client.cluster, websites);
 * // Status is written through PLURAL/status when the CRD declares that subresource, else with the object itself.
 * const subresource = info.statusSubresource ? "status" : undefined;
 * console.log(resourcePath({ ...websites, namespace: "shop", name: "home", subresource }));
 * ```
 */
export interface ResourceInfo {
  /** True when `PLURAL/status` is served: status is written through it, and the main resource drops status. */
  statusSubresource: boolean;
}

/**
 * The cluster does not serve the resource (its CRD is not installed). Reads as 404, hence `missing-crd`.
 *
 * @example
 * ```ts
 * import { discoverResource, type KubeClient, MissingResourceError } from "../../kube.ts";
 *
 * declare const client: KubeClient;
 * const websites = { group: "demo.example.com", version: "v1", kind: "Website", plural: "websites" };
 * try {
 *   await discoverResource(client, client.cluster, websites);
 * } catch (err) {
 *   if (!(err instanceof MissingResourceError)) throw err;
 *   console.warn(err.message); // "cluster dev does not serve Website (...): install its CRD; retrying"
 * }
 * ```
 */
export class MissingResourceError extends Error {
  /** Always "MissingResourceError". */
  override name = "MissingResourceError";
  /** Always 404, as the API server answers for a resource it does not serve. */
  readonly status = 404;
}

/**
 * What discovery needs: one GET (a KubeClient, or a rate-limited wrapper of one, fits).
 *
 * @example
 * ```ts
 * import { discoverResource, type DiscoveryClient } from "../../kube.ts";
 *
 * // A stand-in for a unit test: a core API that serves ConfigMaps only.
 * const client: DiscoveryClient = {
 *   request: <T>() => Promise.resolve({ resources: [{ name: "configmaps" }] } as T),
 * };
 * const configMaps = { group: "", version: "v1", kind: "ConfigMap", plural: "configmaps" };
 * console.log(await discoverResource(client, "test", configMaps)); // { statusSubresource: false }
 * ```
 */
export interface DiscoveryClient {
  /** Sends one request and resolves to its JSON body (see KubeClient.request). */
  request<T>(method: string, path: string, options?: { signal?: AbortSignal }): Promise<T>;
}

/**
 * Asks the API group's discovery document whether `type` is served and has a status subresource.
 * Needs no RBAC (discovery is open to every authenticated user), unlike reading the CRD.
 * Throws MissingResourceError naming the resource and the fix when it is not served.
 *
 * @example
 * ```ts
 * import { discoverResource, KubeClient, loadContexts } from "../../kube.ts";
 *
 * const [dev] = (await loadContexts({ files: ["clusters/local.yaml"] })).select(["dev"]);
 * using client = new KubeClient(dev);
 * const deployments = { group: "apps", version: "v1", kind: "Deployment", plural: "deployments" };
 * const { statusSubresource } = await discoverResource(client, dev.name, deployments);
 * console.log(statusSubresource); // true
 * ```
 */
export async function discoverResource(
  client: DiscoveryClient,
  cluster: string,
  type: ResourceType,
  signal?: AbortSignal,
): Promise<ResourceInfo> {
  const path = type.group ? `/apis/${type.group}/${type.version}` : `/api/${type.version}`;
  let list: { resources?: { name: string }[] };
  try {
    list = await client.request(`GET`, path, { signal });
  } catch (err) {
    if (httpStatusOf(err) === 404 && !(err instanceof ApiError && err.reason === "Forbidden")) {
      throw missing(cluster, type, err);
    }
    throw err;
  }
  const names = new Set((list?.resources ?? []).map((r) => r.name));
  if (!names.has(type.plural)) throw missing(cluster, type);
  return { statusSubresource: names.has(`${type.plural}/status`) };
}

function missing(cluster: string, type: ResourceType, cause?: unknown): MissingResourceError {
  return new MissingResourceError(
    `cluster ${cluster} does not serve ${type.kind} (${qualifiedName(type)}/${type.version}, apiVersion ${
      apiVersionOf(type)
    }): install its CRD; retrying`,
    { cause },
  );
}

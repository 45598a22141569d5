/**
 * Kubernetes access on its own: load kubeconfig contexts (or the pod's service account) as {@link ClusterAccess},
 * talk to an API server with {@link KubeClient} (requests, list pages, watches; fresh credentials on every request,
 * bounded bodies, one-line errors that never hold a credential), build API paths and tell errors apart.
 *
 * This is the client the hub itself uses, not `@kubernetes/client-node`. Operators do not need it: their typed,
 * cached client comes with each reconcile (see the package root).
 *
 * @example List the ConfigMaps of a namespace in one context, and read one that may not exist
 * ```ts
 * import { isNotFound, KubeClient, loadContexts, resourcePath } from "./kube.ts";
 *
 * const catalog = await loadContexts({ files: ["clusters/local.yaml"] });
 * const [dev] = catalog.select(["dev"]);
 * using client = new KubeClient(dev, { requestTimeoutMs: 10_000 });
 * const configMaps = { group: "", version: "v1", plural: "configmaps", namespace: "default" };
 * const page = await client.listPage<{ metadata: { name: string } }>(resourcePath(configMaps), { limit: 50 });
 * console.log(page.items.map((cm) => cm.metadata.name));
 * try {
 *   await client.request("GET", resourcePath({ ...configMaps, name: "maybe" }));
 * } catch (err) {
 *   if (!isNotFound(err)) throw err;
 * }
 * ```
 *
 * @example Watch from where a list ended
 * ```ts
 * import { KubeClient, loadContexts, resourcePath } from "./kube.ts";
 *
 * const [prod] = (await loadContexts()).select(["prod"]);
 * const client = new KubeClient(prod);
 * const path = resourcePath({ group: "", version: "v1", plural: "namespaces" });
 * const { resourceVersion } = await client.listPage(path);
 * const stop = AbortSignal.timeout(30_000);
 * for await (const event of client.watch(path, { resourceVersion, timeoutSeconds: 60, signal: stop })) {
 *   console.log(event.type);
 * }
 * client.close();
 * ```
 *
 * @example Inside a pod: the service account's cluster
 * ```ts
 * import { ConfigError, IN_CLUSTER, inClusterAccess } from "./kube.ts";
 *
 * try {
 *   const access = inClusterAccess();
 *   console.log(access.name === IN_CLUSTER, access.server);
 * } catch (err) {
 *   if (!(err instanceof ConfigError)) throw err; // not running in a pod
 * }
 * ```
 *
 * @module
 */

export {
  ALL_CONTEXTS,
  ApiError,
  apiVersionOf,
  AuthError,
  type ClusterAccess,
  type ClusterAuth,
  ConfigError,
  type ContextCatalog,
  type CredentialPolicy,
  DEFAULT_MAX_OBJECT_BYTES,
  discoverResource,
  type DiscoveryClient,
  type EnvSource,
  type FailureState,
  failureStateOf,
  type FetchLike,
  httpStatusOf,
  IN_CLUSTER,
  inClusterAccess,
  type InClusterOptions,
  isConflict,
  isNotFound,
  KubeClient,
  type KubeClientOptions,
  type KubeconfigContext,
  type KubeconfigText,
  type KubeconfigTextOptions,
  type KubeRequestOptions,
  type ListPage,
  type ListPageOptions,
  loadContexts,
  type LoadContextsOptions,
  MissingResourceError,
  namespacePath,
  parseKubeconfigText,
  qualifiedName,
  type QueryValue,
  type ResourceInfo,
  resourcePath,
  type ResourceRef,
  type ResourceType,
  type ResponseInfo,
  retryAfterMsOf,
  STRICT_CREDENTIAL_POLICY,
  TooLargeError,
  TransportError,
  type UntrustedKubeconfigParser,
  type WatchEvent,
  type WatchEventType,
  type WatchOptions,
} from "./src/kube/mod.ts";

// The types KubeClientOptions takes from the utilities, re-exported as types only (Logger is built from "./hub").
export type { Clock, LogFields, Logger, LogLevel, Timer } from "./src/util/mod.ts";

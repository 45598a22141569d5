// Public surface of src/kube, the only code that talks HTTP to Kubernetes: kubeconfig and auth, the per-cluster client, errors.
export {
  ALL_CONTEXTS,
  type ClusterAccess,
  type ClusterAuth,
  type ContextCatalog,
  type EnvSource,
  IN_CLUSTER,
  inClusterAccess,
  type InClusterOptions,
  loadContexts,
  type LoadContextsOptions,
  SERVICE_ACCOUNT_ROOT,
  tlsFingerprint,
} from "./kubeconfig.ts";
export {
  type FetchLike,
  KubeClient,
  type KubeClientOptions,
  type KubeRequestOptions,
  type ListPage,
  type ListPageOptions,
  type QueryValue,
  type ResponseInfo,
  type WatchEvent,
  type WatchEventType,
  type WatchOptions,
} from "./client.ts";
export {
  ApiError,
  apiErrorFrom,
  type ApiErrorInit,
  AuthError,
  ConfigError,
  defaultReason,
  isApiError,
  isGone,
  reasonPhrase,
  TransportError,
} from "./errors.ts";
export {
  type KubeconfigContext,
  type KubeconfigText,
  type KubeconfigTextOptions,
  parseKubeconfigText,
} from "./kubeconfig_text.ts";
export { namespacePath, resourcePath, type ResourceRef } from "./paths.ts";
export { describePermission, missingPermissions, type PermissionCheck } from "./access_review.ts";

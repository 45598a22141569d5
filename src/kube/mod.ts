// Public surface of src/kube, the only code that talks HTTP to Kubernetes: kubeconfig and auth, the per-cluster client, errors.
export { type ClusterAccess, type ClusterAuth, tlsFingerprint } from "./config/cluster_access.ts";
export {
  ALL_CONTEXTS,
  type ContextCatalog,
  type EnvSource,
  loadContexts,
  type LoadContextsOptions,
} from "./config/kubeconfig.ts";
export { IN_CLUSTER, inClusterAccess, type InClusterOptions, SERVICE_ACCOUNT_ROOT } from "./config/in_cluster.ts";
export { type FetchLike, KubeClient, type QueryValue, type WatchEvent, type WatchEventType } from "./client.ts";
// Every option, page and constant of a request (all of client_options.ts).
export * from "./client_options.ts";
export {
  ApiError,
  AuthError,
  ConfigError,
  type FailureState,
  failureStateOf,
  httpStatusOf,
  isConflict,
  isNotFound,
  retryAfterMsOf,
  TooLargeError,
  TransportError,
} from "./errors.ts";
export {
  apiVersionOf,
  namespacePath,
  qualifiedName,
  resourcePath,
  type ResourceRef,
  type ResourceType,
} from "./paths.ts";
export { discoverResource, type DiscoveryClient, MissingResourceError, type ResourceInfo } from "./discovery.ts";
export {
  type KubeconfigContext,
  type KubeconfigText,
  type KubeconfigTextOptions,
  parseKubeconfigText,
} from "./config/kubeconfig_text.ts";
export {
  authProviderError,
  checkUntrustedKubeconfig,
  type CredentialPolicy,
  type CredentialProblem,
  execAllowlistProblem,
  STRICT_CREDENTIAL_POLICY,
  untrustedContextProblems,
} from "./config/credential_policy.ts";
export { describePermission, missingPermissions, type PermissionCheck } from "./access_review.ts";
export { missingPermissionsIn, type ResourceRule, rulesReview } from "./rules_review.ts";
export {
  MAX_KUBECONFIG_DEPTH,
  MAX_UNTRUSTED_KUBECONFIG_BYTES,
  MAX_UNTRUSTED_KUBECONFIG_ENTRIES,
  tooLarge as kubeconfigTooLarge,
} from "./config/kubeconfig_yaml.ts";
export {
  KubeconfigParser,
  type KubeconfigParserOptions,
  type ParseWorker,
  type UntrustedKubeconfigParser,
} from "./config/kubeconfig_parser.ts";
export {
  EXEC_CREDENTIAL_VERSIONS,
  ExecCredentialAccess,
  type ExecCredentialAccessInit,
  type ExecCredentialStatus,
  type ExecPluginSpec,
  parseExecCredential,
  refreshAt,
} from "./config/exec_credential.ts";

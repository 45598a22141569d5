/**
 * operator-hub as a library: define operators with {@link defineOperator} and host them, with the
 * built-in ones or alone, in a {@link Hub} that runs them across many Kubernetes clusters.
 *
 * @example
 * ```ts
 * import { defineOperator, Hub, Logger } from "./mod.ts";
 * const hello = defineOperator({
 *   name: "hello",
 *   resource: { group: "examples.operator-hub.dev", version: "v1", kind: "Greeting", plural: "greetings" },
 *   verbs: ["patchStatus"],
 *   async reconcile(request, { client }) {
 *     const obj = client.cached(request);
 *     if (obj && !obj.status) await client.patchStatus(obj, { message: `Hello, ${request.name}` });
 *   },
 * });
 * const hub = new Hub({ operators: [hello], logger: new Logger({ level: "info" }) });
 * console.log(hub.operators()); // ["hello"]
 * ```
 *
 * @module
 */

export {
  adopt,
  type Adopted,
  type AdoptOptions,
  type AdoptParent,
  type BackgroundRun,
  type BackgroundTasks,
  type CacheObserver,
  type ClusterConnection,
  type DaemonContext,
  type DaemonFn,
  type DaemonResult,
  type DaemonSpec,
  defineHandlers,
  defineOperator,
  type DiffItem,
  type EventSink,
  type EventSubject,
  type FailureState,
  FINALIZER,
  type HandlerContext,
  type HandlerFn,
  type HandlerOutcome,
  type Handlers,
  type HandlersDefinition,
  type HandlerSpec,
  type HandlerState,
  type HealthState,
  ignoreNotFound,
  type Index,
  type IndexEntries,
  type IndexEntry,
  type Indexes,
  type IndexFn,
  isConflict,
  isNotFound,
  type KindName,
  kinds,
  type ListOptions,
  type NewObject,
  type ObjectMeta,
  type ObjectRef,
  type Operator,
  type OperatorDefinition,
  OperatorDefinitionError,
  type OwnedResource,
  type OwnerReference,
  PARENT_ANNOTATION,
  PARENT_NAME_LABEL,
  PARENT_RESOURCE_LABEL,
  type PatchType,
  PermanentError,
  type Projection,
  type Reconciler,
  type ReconcileResult,
  type ReconcileScope,
  type Request,
  type ResourceClient,
  type ResourceType,
  type ResourceUse,
  retryOnConflict,
  type RetryOptions,
  type StoredObject,
  TemporaryError,
  TerminalError,
  type TimerSpec,
  trimObject,
  type Verb,
  type WatchedResource,
} from "./src/sdk/mod.ts";
export {
  type ClusterHealth,
  type ClusterRegistration,
  DEFAULT_LIMITS,
  Hub,
  type HubHealth,
  type HubLeaderElection,
  type HubLimits,
  type HubOptions,
  type HubShardStatus,
  type HubShardView,
  type HubStatus,
  type LeaderElectionSnapshot,
  type LeaseSettings,
  type OperatorHealth,
  type ProviderHealth,
  type RegistrationCondition,
  type RegistrationProblem,
} from "./src/hub/mod.ts";
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
} from "./src/kube/mod.ts";
export { type LogFields, type LogFormat, Logger, type LoggerOptions, type LogLevel } from "./src/util/mod.ts";

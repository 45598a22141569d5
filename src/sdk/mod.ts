// Public surface of src/sdk: what an operator's code imports (define it, its typed client, conflict helpers).
export { defineOperator, type OperatorDefinition, OperatorDefinitionError } from "./define_operator.ts";
export {
  defineHandlers,
  FINALIZER,
  type HandlerContext,
  type HandlerFn,
  type Handlers,
  type HandlersDefinition,
  type HandlerSpec,
  PermanentError,
  TemporaryError,
  type TimerSpec,
} from "./handlers.ts";
export {
  type AdmissionContext,
  AdmissionError,
  type AdmissionSpec,
  type MutateFn,
  type MutateHandlers,
  type ValidateFn,
  type ValidateHandlers,
} from "./admission.ts";
export { jsonPatch } from "./json_patch.ts";
export { loadOperatorFiles, OperatorFileError } from "./operator_files.ts";
export { type DaemonContext, type DaemonFn, type DaemonResult, type DaemonSpec } from "./daemons.ts";
export { type Index, type IndexEntries, type IndexEntry, type Indexes, type IndexFn } from "./indexes.ts";
export {
  adopt,
  type Adopted,
  type AdoptOptions,
  type AdoptParent,
  type OwnedResource,
  PARENT_ANNOTATION,
  PARENT_NAME_LABEL,
  PARENT_RESOURCE_LABEL,
} from "./adopt.ts";
export { type KindName, type Kinds, kinds, type KubeObject } from "./kinds.ts";
export { type DiffItem, type HandlerOutcome, type HandlerState } from "./handler_state.ts";
export {
  type AdmissionLabelSelector,
  type AdmissionOperation,
  type AdmissionRequest,
  type AdmissionUserInfo,
  type AdmissionVerdict,
  type AdmissionWebhook,
  type BackgroundRun,
  type BackgroundTasks,
  type CacheObserver,
  type ClusterConnection,
  type EventSink,
  type EventSubject,
  fieldProjection,
  type HealthState,
  ignoreNotFound,
  type JsonPatchOperation,
  type ListOptions,
  type NewObject,
  type ObjectMeta,
  objectMeta,
  type ObjectRef,
  type Operator,
  type OwnerReference,
  type PartialMeta,
  type PartialObjectMetadata,
  type PatchType,
  type Projection,
  type Reconciler,
  type ReconcileResult,
  type ReconcileScope,
  type Request,
  type ResourceClient,
  type ResourceUse,
  retryOnConflict,
  type RetryOptions,
  type StoredObject,
  TerminalError,
  trimObject,
  UndeclaredFieldError,
  type Verb,
  type WatchedResource,
} from "../runtime/mod.ts";
export {
  type FailureState,
  failureStateOf,
  httpStatusOf,
  isConflict,
  isNotFound,
  type ResourceType,
} from "../kube/mod.ts";

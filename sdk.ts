/**
 * The whole operator SDK, for operators that need more than the quick start of `"."`: handler, daemon, index and
 * admission types, ownership labels, partial metadata, projections, events and the runtime's own types. Every name
 * of `"."` is here too (the same declarations).
 *
 * @example A validating and a mutating admission handler, and a JSON patch
 * ```ts
 * import { AdmissionError, defineHandlers, jsonPatch } from "./sdk.ts";
 *
 * export const guarded = defineHandlers({
 *   name: "guarded",
 *   resource: { group: "examples.operator-hub.dev", version: "v1", kind: "Greeting", plural: "greetings" },
 *   validate: ({ spec }) => {
 *     if (spec.who === "nobody") throw new AdmissionError("spec.who: greet somebody");
 *   },
 *   mutate: ({ spec }) => {
 *     spec.who ??= "world";
 *   },
 * });
 * console.log(jsonPatch({ a: 1 }, { a: 2 }));
 * ```
 *
 * @module
 */

export {
  type AdmissionContext,
  AdmissionError,
  type AdmissionLabelSelector,
  type AdmissionOperation,
  type AdmissionRequest,
  type AdmissionSpec,
  type AdmissionUserInfo,
  type AdmissionVerdict,
  type AdmissionWebhook,
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
  fieldProjection,
  FINALIZER,
  type HandlerContext,
  type HandlerFn,
  type HandlerOutcome,
  type Handlers,
  type HandlersDefinition,
  type HandlerSpec,
  type HandlerState,
  ignoreNotFound,
  type Index,
  type IndexEntries,
  type IndexEntry,
  type Indexes,
  type IndexFn,
  isConflict,
  isNotFound,
  jsonPatch,
  type JsonPatchOperation,
  type KindName,
  kinds,
  type ListOptions,
  type MutateFn,
  type MutateHandlers,
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
  type PartialMeta,
  type PartialObjectMetadata,
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
  UndeclaredFieldError,
  type ValidateFn,
  type ValidateHandlers,
  type Verb,
  type WatchedResource,
} from "./src/sdk/mod.ts";
// The logger every reconcile and handler gets (`scope.logger`, `ctx.logger`), as a type: build one from "./hub".
export type { LogFields, Logger, LogLevel } from "./src/util/mod.ts";

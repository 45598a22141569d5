/**
 * The operator SDK: everything an operator's code imports. Write an operator as one reconcile with
 * {@link defineOperator} (controller-runtime's shape) or as Kopf-style handlers with {@link defineHandlers}; both
 * return an {@link Operator}, which the hub runs in every cluster it engages, with a typed, cached client per cluster
 * ({@link ResourceClient}), retries, events, finalizers, owned children ({@link adopt}), daemons, indexes and
 * admission webhooks (validate and mutate handlers, {@link jsonPatch}).
 *
 * Run operators with the command line (`deno task run my_operator.ts`, or `main()` from `"./cli"`), or host them in
 * a program of your own with `Hub` from `"./hub"`. Kubernetes access outside an operator is `"./kube"`.
 *
 * @example An operator as one reconcile
 * ```ts
 * import { defineOperator, ignoreNotFound } from "./mod.ts";
 *
 * export const hello = defineOperator({
 *   name: "hello",
 *   resource: { group: "examples.operator-hub.dev", version: "v1", kind: "Greeting", plural: "greetings" },
 *   verbs: ["patchStatus"],
 *   async reconcile(request, { client, logger }) {
 *     const obj = client.cached(request);
 *     if (!obj || obj.status) return;
 *     logger.info("greeting", { name: request.name, cluster: request.cluster });
 *     await client.patchStatus(obj, { message: `Hello, ${request.name}` }).catch(ignoreNotFound);
 *   },
 * });
 * ```
 *
 * @example The same as Kopf-style handlers
 * ```ts
 * import { defineHandlers, TemporaryError } from "./mod.ts";
 *
 * export const hello = defineHandlers({
 *   name: "hello",
 *   resource: { group: "examples.operator-hub.dev", version: "v1", kind: "Greeting", plural: "greetings" },
 *   create: async ({ name, spec, info }) => {
 *     if (typeof spec.who !== "string") throw new TemporaryError("spec.who is not set yet", 10_000);
 *     await info(`greeted ${spec.who}`, "Greeted");
 *     return { message: `Hello, ${spec.who} (from ${name})` };
 *   },
 * });
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
  type ValidateFn,
  type ValidateHandlers,
  type Verb,
  type WatchedResource,
} from "./src/sdk/mod.ts";
// The logger every reconcile and handler gets (`scope.logger`, `ctx.logger`), as a type: build one from "./hub".
export type { LogFields, Logger, LogLevel } from "./src/util/mod.ts";

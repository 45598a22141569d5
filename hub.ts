/**
 * Embedding the hub in a program of your own: a {@link Hub} hosts operators (yours, made with `defineOperator` or
 * `defineHandlers` from the package root, and the built-in ones) across the clusters you engage, with its limits,
 * leader election, health (`/status`'s data) and a structured {@link Logger}.
 *
 * Clusters come from `"./kube"` ({@link ClusterAccess}: a kubeconfig context or the pod's service account); the
 * command line (`"./cli"`) does all of this, with cluster providers, HTTP ports and flags, for a hub run as a program.
 *
 * The types of the operator contract a Hub takes ({@link Operator} and what it is made of) are re-exported here as
 * types, so this entry documents on its own; write operators against the package root.
 *
 * @example Host an operator in every context of a kubeconfig file
 * ```ts
 * import { defineOperator } from "./mod.ts";
 * import { Hub, Logger } from "./hub.ts";
 * import { loadContexts } from "./kube.ts";
 *
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
 * const catalog = await loadContexts({ files: ["clusters/local.yaml"] });
 * for (const access of catalog.select(["all"])) await hub.engage(access.name, access);
 * const stop = new AbortController();
 * Deno.addSignalListener("SIGINT", () => stop.abort());
 * await hub.start(stop.signal); // settles once stopped and drained
 * ```
 *
 * @example The built-in operators beside your own, with tighter limits
 * ```ts
 * import { BUILT_IN_OPERATORS, DEFAULT_LIMITS, Hub, Logger } from "./hub.ts";
 *
 * const builtIns = Object.values(BUILT_IN_OPERATORS).map((make) => make({ homeCluster: "prod" }));
 * const hub = new Hub({
 *   operators: builtIns,
 *   limits: { concurrency: 8, qps: DEFAULT_LIMITS.qps / 2 },
 *   logger: new Logger({ level: "warn", format: "json" }),
 * });
 * console.log(hub.operators()); // ["uuid", "mirror"]
 * console.log(hub.health().status); // "ok": no cluster engaged yet
 * ```
 *
 * @module
 */

export {
  type ClusterHealth,
  type ClusterRegistration,
  DEFAULT_LIMITS,
  Hub,
  type HubHealth,
  type HubLeaderElection,
  type HubLimits,
  type HubOptions,
  type HubReadiness,
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
export { BUILT_IN_OPERATORS, type BuiltInContext, DEFAULT_OPERATORS } from "./src/operators/mod.ts";
export { uuidOperator } from "./src/operators/uuid/mod.ts";
export { mirrorOperator, type MirrorOptions } from "./src/operators/mirror/mod.ts";
export { type LogFields, type LogFormat, Logger, type LoggerOptions, type LogLevel } from "./src/util/mod.ts";
export type { HealthState } from "./src/sdk/mod.ts";

// The types the Hub's API is made of, documented at their home ("." or "./kube"), re-exported as types only.
export type {
  AdmissionLabelSelector,
  AdmissionOperation,
  AdmissionRequest,
  AdmissionUserInfo,
  AdmissionVerdict,
  AdmissionWebhook,
  BackgroundRun,
  BackgroundTasks,
  CacheObserver,
  ClusterConnection,
  EventSink,
  EventSubject,
  JsonPatchOperation,
  ListOptions,
  NewObject,
  ObjectMeta,
  ObjectRef,
  Operator,
  PatchType,
  Projection,
  Reconciler,
  ReconcileResult,
  ReconcileScope,
  Request,
  ResourceClient,
  ResourceUse,
  StoredObject,
  Verb,
  WatchedResource,
} from "./src/sdk/mod.ts";
export type { ClusterAccess, ClusterAuth, FailureState, ResourceType } from "./src/kube/mod.ts";

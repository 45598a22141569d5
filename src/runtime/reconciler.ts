// The reconciler contract: one level-based method that reads current state, never the event that woke it.

import type { Logger } from "../util/mod.ts";
import type { EventSink } from "./api_client.ts";
import type { ResourceClient } from "./resource_client.ts";
import type { ResourceType } from "../kube/mod.ts";
import type { StoredObject } from "./cache/store.ts";
import type { Request } from "../queue/mod.ts";

/**
 * What to reconcile: `{cluster, namespace, name}`, the one request shape from a watch event to `reconcile()`. Declared
 * in src/queue (the lowest layer that holds it: the shared queue keeps requests), re-exported here with the contract.
 */
export type { Request } from "../queue/mod.ts";

/** How the runtime calls a cluster's API and posts Events there (declared in api_client.ts, below resource_client.ts). */
export type { ApiClient, EventSink, EventSubject } from "./api_client.ts";

/** The error retrying cannot fix (declared in terminal_error.ts, below resource_client.ts). */
export { TerminalError } from "./terminal_error.ts";

/**
 * Another engaged cluster, for operators that reach across clusters (e.g. copying an object from a home cluster).
 *
 * @example
 * ```ts
 * import { type ClusterConnection, kinds } from "../../sdk.ts";
 * // Copies a ConfigMap's data from the home cluster (its `get` must be in the operator's `uses`).
 * async function homeData(home: ClusterConnection, namespace: string, name: string) {
 *   const source = await home.client(kinds.ConfigMap).get({ namespace, name });
 *   return source.data ?? {};
 * }
 * ```
 */
export interface ClusterConnection {
  /** The cluster's name. */
  readonly name: string;
  /**
   * A client for `type` in this cluster (the operator's own resource when omitted); it must be declared by the
   * operator. Its objects are of the type `type` carries (`kinds.ConfigMap`, a defined resource), else `U`.
   */
  client<U extends StoredObject = StoredObject>(type?: ResourceType<U> | ResourceType): ResourceClient<U>;
}

/**
 * What one reconcile can reach: a typed client for the operator's resource in the request's cluster
 * (cache and API), events, the other engaged clusters, an abort signal (timeout, shutdown) and a logger
 * carrying cluster, namespace, name and reconcileId.
 *
 * @example
 * ```ts
 * import type { ReconcileScope, Request } from "../../sdk.ts";
 * // A helper a reconcile calls with its scope: marks the object Ready.
 * async function markReady(request: Request, { client, logger, signal }: ReconcileScope): Promise<void> {
 *   const obj = client.cached(request);
 *   if (!obj || signal.aborted) return;
 *   await client.patchStatus(obj, { phase: "Ready", observedGeneration: obj.metadata.generation });
 *   logger.info("ready");
 * }
 * ```
 */
export interface ReconcileScope<T extends StoredObject = StoredObject> {
  /** The operator's resource in the request's cluster: cache, reads and writes. */
  readonly client: ResourceClient<T>;
  /** Kubernetes Events about objects of the operator's resource. */
  readonly events: EventSink;
  /** Any engaged cluster by name (the request's own included); undefined when it is not engaged. */
  cluster(name: string): ClusterConnection | undefined;
  /** The names of every engaged cluster (the request's own included); the hub always provides it. */
  clusters?(): string[];
  /** Aborted when the reconcile times out or the hub shuts down; the client's calls use it. */
  readonly signal: AbortSignal;
  /** Logs with cluster, operator, namespace, name and reconcileId. */
  readonly logger: Logger;
  /** Identifies this reconcile in logs. */
  readonly reconcileId: string;
  /**
   * Long-running tasks of this operator's objects in the request's cluster (what `defineHandlers` daemons run on),
   * stopped when this replica stops reconciling there; the hub always provides it.
   */
  readonly background?: BackgroundTasks;
}

/**
 * Nothing, or a request to look again later even without a change.
 *
 * @example
 * ```ts
 * import type { ReconcileResult, ReconcileScope, Request } from "../../sdk.ts";
 * // Look again in a minute while the object is not Ready, even if nothing changes.
 * function next(request: Request, { client }: ReconcileScope): ReconcileResult {
 *   const status = client.cached(request)?.status as { phase?: string } | undefined;
 *   return status?.phase === "Ready" ? undefined : { requeueAfterMs: 60_000 };
 * }
 * ```
 */
export type ReconcileResult = void | { requeueAfterMs: number };

/**
 * Guarantees (from the controller): a request is never reconciled twice at once; a thrown error
 * means a retry with per-item backoff, except a TerminalError, which is logged and not retried.
 *
 * @example
 * ```ts
 * import type { Reconciler } from "../../sdk.ts";
 * const reconciler: Reconciler = {
 *   async reconcile(request, { client, logger }) {
 *     const obj = client.cached(request);
 *     if (!obj) return; // deleted: nothing to do
 *     if (!obj.status) await client.patchStatus(obj, { message: `Hello, ${request.name}` });
 *     logger.info("greeted", { cluster: request.cluster });
 *   },
 * };
 * ```
 */
export interface Reconciler<T extends StoredObject = StoredObject> {
  /** Brings the object named by `request` to its desired state. */
  reconcile(request: Request, scope: ReconcileScope<T>): Promise<ReconcileResult>;
}

/**
 * What a background task runs: `scope.signal` aborts when it must stop; settling ends the task.
 *
 * @example
 * ```ts
 * import type { BackgroundRun } from "./reconciler.ts";
 * const idle: BackgroundRun = (scope) =>
 *   new Promise((resolve) => scope.signal.addEventListener("abort", () => resolve(), { once: true }));
 * console.log(typeof idle); // "function"
 * ```
 */
export type BackgroundRun = (scope: ReconcileScope) => Promise<void>;

/**
 * Background tasks of one operator's objects in one cluster, reached from a reconcile as `scope.background`: a
 * reconcile starts one per object (a daemon), and the runtime stops them all when this replica stops reconciling in
 * the cluster (its disengagement, a shard handoff, a pause, lost leadership, the hub's stop).
 *
 * Guarantees:
 * - at most one task per key runs in this replica (a task stopped but still running past its grace period keeps its
 *   key until it settles);
 * - `start` refuses (returns false) once the tasks were stopped for the cluster, so a reconcile still running when
 *   reconciling stopped starts nothing;
 * - a task's scope is its own: its signal aborts on `stop(key)` or when reconciling in the cluster stops, and its
 *   client's calls are aborted with it (and fail once the cluster is disengaged: its client is closed).
 *
 * @example A reconcile that keeps one task per object (what `defineHandlers` daemons do)
 * ```ts
 * import { defineOperator } from "../sdk/define_operator.ts";
 * export const keeper = defineOperator({
 *   name: "keeper",
 *   resource: { group: "examples.operator-hub.dev", version: "v1", kind: "Probe", plural: "probes" },
 *   async reconcile(request, { client, background }) {
 *     const key = `${request.namespace}/${request.name}`;
 *     if (!client.cached(request)) return await background?.stop(key);
 *     background?.start(key, (task) => task.signal.aborted ? Promise.resolve() : new Promise((r) =>
 *       task.signal.addEventListener("abort", () => r(), { once: true })));
 *   },
 * });
 * ```
 */
export interface BackgroundTasks {
  /** Whether a task runs under `key` now. */
  has(key: string): boolean;
  /** Starts `run` under `key` unless one runs or the tasks were stopped; `graceMs` overrides the default grace. */
  start(key: string, run: BackgroundRun, options?: { graceMs?: number }): boolean;
  /** Aborts the task under `key`; settles once it ended, or its grace period passed (logged), or at once if none. */
  stop(key: string): Promise<void>;
}

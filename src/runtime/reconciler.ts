// The reconciler contract: one level-based method that reads current state, never the event that woke it.

import type { Logger } from "../util/mod.ts";
import type { BackgroundTasks } from "./background_tasks.ts";
import type { ResourceClient } from "./resource_client.ts";
import type { ResourceType } from "../kube/mod.ts";
import type { StoredObject } from "./store.ts";
import type { Request } from "../queue/mod.ts";

/**
 * What to reconcile: `{cluster, namespace, name}`, the one request shape from a watch event to `reconcile()`. Declared
 * in src/queue (the lowest layer that holds it: the shared queue keeps requests), re-exported here with the contract.
 */
export type { Request } from "../queue/mod.ts";

/** The request-independent subset of the kube client the runtime builds on; every call spends the cluster's API budget. */
export interface ApiClient {
  request<T>(method: string, path: string, options?: {
    query?: Record<string, string | number | boolean | undefined>;
    body?: unknown;
    contentType?: string;
    signal?: AbortSignal;
    /** Skip reading a 2xx body as JSON (the call resolves to undefined): a write whose answer is not needed. */
    discardBody?: boolean;
  }): Promise<T>;
}

/**
 * An object an event is about: its identity (apiVersion and kind come from the resource).
 *
 * @example
 * ```ts
 * import type { EventSink, EventSubject } from "../../sdk.ts";
 * declare const events: EventSink; // a reconcile's `scope.events`
 * const subject: EventSubject = { metadata: { name: "hello", namespace: "web", uid: "4f1c" } };
 * await events.record(subject, "Warning", "InvalidSpec", "spec.size must be positive, got -1");
 * ```
 */
export interface EventSubject {
  /** The object's identity; `uid` ties the event to this incarnation of it. */
  metadata: { name: string; namespace?: string; uid?: string };
}

/**
 * Posts Kubernetes Events about objects of the operator's resource. Never throws.
 *
 * @example
 * ```ts
 * import type { EventSink } from "../../sdk.ts";
 * // A sink that keeps what it was told, for a unit test of a reconcile.
 * const recorded: string[] = [];
 * const events: EventSink = {
 *   record(object, type, reason, message) {
 *     recorded.push(`${type} ${reason} ${object.metadata.name}: ${message}`);
 *     return Promise.resolve();
 *   },
 * };
 * ```
 */
export interface EventSink {
  /** Posts (or, for a repeat, counts) an event; events below the hub's `--event-level` are dropped. */
  record(object: EventSubject, type: "Normal" | "Warning", reason: string, message: string): Promise<void>;
}

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
 * An error that retrying cannot fix: the controller logs it and does not retry the request.
 *
 * @example
 * ```ts
 * import { TerminalError } from "./reconciler.ts";
 * const err = new TerminalError("spec.size must be positive, got -1");
 * console.log(err.name); // "TerminalError"
 * ```
 */
export class TerminalError extends Error {
  /** Always "TerminalError". */
  override name = "TerminalError";
}

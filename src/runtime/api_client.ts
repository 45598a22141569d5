// How the runtime reaches one cluster: the subset of the kube client it calls, and the sink its Events go to.

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

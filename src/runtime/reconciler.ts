// The reconciler contract: one level-based method that reads current state, never the event that woke it.

import type { Logger } from "../util/mod.ts";
import type { Store } from "./store.ts";

/** What to reconcile: the cluster is part of the request, as in multicluster-runtime. */
export interface Request {
  cluster: string;
  namespace: string;
  name: string;
}

/** What a cluster offers a reconciler: its cache and a rate-limited API client. */
export interface ClusterContext {
  readonly name: string;
  readonly store: Store;
  readonly api: ApiClient;
  readonly events: EventSink;
}

/** The subset of the kube client a reconciler may use; every call spends the cluster's API budget. */
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

/** Posts Kubernetes Events about an object. Never throws. */
export interface EventSink {
  record(
    object: { apiVersion: string; kind: string; metadata: { name: string; namespace?: string; uid?: string } },
    type: "Normal" | "Warning",
    reason: string,
    message: string,
  ): Promise<void>;
}

export interface ReconcileContext {
  readonly cluster: ClusterContext;
  readonly signal: AbortSignal;
  readonly logger: Logger;
  readonly reconcileId: string;
}

/** Nothing, or a request to look again later even without a change. */
export type ReconcileResult = void | { requeueAfterMs: number };

/**
 * Guarantees (from the controller): a request is never reconciled twice at once; a thrown error
 * means a retry with per-item backoff, except a TerminalError, which is logged and not retried.
 */
export interface Reconciler {
  reconcile(request: Request, context: ReconcileContext): Promise<ReconcileResult>;
}

/** An error that retrying cannot fix. */
export class TerminalError extends Error {
  override name = "TerminalError";
}

// The contract between the hub and an operator it hosts: which resource, which permissions, how to reconcile.

import type { ClusterContext, Reconciler } from "./reconciler.ts";
import type { Projection, StoredObject } from "./store.ts";

/** A permission the operator needs, checked before watching (SelfSubjectAccessReview). */
export interface PermissionCheck {
  verb: string;
  group: string;
  resource: string;
  subresource?: string;
  namespace?: string;
}

/** What `prepare` learned about a cluster. */
export interface Preparation {
  /** The permissions needed given what the cluster offers (e.g. with or without a status subresource). */
  permissions: PermissionCheck[];
}

/** Raised by `prepare` when the cluster does not serve the operator's resource. */
export class MissingResourceError extends Error {
  override name = "MissingResourceError";
  readonly status = 404;
}

export interface Operator {
  /** Controller name, used in metrics and logs. */
  readonly name: string;
  readonly resource: { group: string; version: string; plural: string };
  /** What the store keeps of each object. */
  readonly project?: Projection;
  readonly reconciler: Reconciler;
  /**
   * A cheap pre-check on the stored object, from its current state only (never the event): false
   * means a reconcile would certainly do nothing, so the key is not queued. It keeps the watch
   * event of the operator's own write, and every finished object at startup, out of the queue.
   * Deleted objects are always passed on.
   */
  readonly needsReconcile?: (object: StoredObject) => boolean;
  /** Discovers what the cluster offers; throws MissingResourceError when the resource is not served. */
  prepare(cluster: ClusterContext, signal: AbortSignal): Promise<Preparation>;
  /** Drops whatever the operator remembers of a disengaged cluster. */
  forget?(cluster: string): void;
}

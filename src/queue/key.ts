// The request (one object in one cluster) and the queue key (a request for one operator); the key's string id is
// private to src/queue.

/** A key that cannot be queued: an empty cluster name, or an operator, namespace or name that is not a valid part. */
export class InvalidKeyError extends Error {
  override name = "InvalidKeyError";
}

/**
 * What to reconcile: one object of the operator's resource in one cluster. The cluster is part of the request, as in
 * multicluster-runtime's `mcreconcile.Request`. `namespace` is "" for cluster-scoped objects.
 *
 * The one request shape from a watch event to `reconcile()`: an informer hands its listeners these, the shared queue
 * holds them (with the operator, see QueueKey), and the controller passes the queued one to `reconcile()` as it is.
 * Declared here, in the lowest layer that holds it; runtime/reconciler.ts (the reconciler contract) re-exports it.
 *
 * @example
 * ```ts
 * import type { Request, ResourceClient } from "../../sdk.ts";
 * declare const client: ResourceClient; // a reconcile's `scope.client`
 * const request: Request = { cluster: "prod", namespace: "web", name: "hello" };
 * const obj = client.cached(request); // a Request is an ObjectRef too
 * console.log(obj?.metadata.resourceVersion);
 * ```
 */
export interface Request {
  /** The engaged cluster's name. */
  readonly cluster: string;
  /** The object's namespace; "" for cluster-scoped objects. */
  readonly namespace: string;
  /** The object's name. */
  readonly name: string;
}

/**
 * What the shared queue holds: `request` for `operator` (hence for its resource: each operator reconciles exactly one
 * resource, so two operators of one resource never share a key).
 *
 * Two keys are the same key when their parts are equal; the queue compares them by value, never by identity.
 */
export interface QueueKey {
  readonly operator: string;
  readonly request: Request;
}

/**
 * The key's identity inside src/queue (dedupe, maps, rate-limiter state); never seen outside it.
 *
 * Guarantees: two keys have the same id exactly when their parts are equal, also for a cluster name holding "/"
 * (an inventory's `namespace/name`, an EKS context `arn:…:cluster/x`): only the cluster part may hold "/".
 * Assumptions: Kubernetes names and namespaces never contain "/", and neither do operator names (checked when
 * defined). Any of them containing "/", an empty name or operator, or an empty cluster name, throws InvalidKeyError.
 */
export function keyId(key: QueueKey): string {
  const { operator, request: { cluster, namespace, name } } = key;
  if (cluster === "") throw bad("cluster name", cluster);
  if (operator === "" || operator.includes("/")) throw bad("operator name", operator);
  if (namespace.includes("/")) {
    throw new InvalidKeyError(`cannot queue a key: namespace must not contain "/", got ${q(namespace)}`);
  }
  if (name === "" || name.includes("/")) throw bad("name", name);
  return `${cluster}/${operator}/${namespace}/${name}`;
}

function bad(what: string, value: string): InvalidKeyError {
  return new InvalidKeyError(`cannot queue a key: ${what} must be non-empty without "/", got ${q(value)}`);
}

function q(s: string): string {
  return JSON.stringify(s);
}

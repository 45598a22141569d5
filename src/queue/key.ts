// Queue keys: one object of one operator in one cluster, typed; their string encoding is private to src/queue.

/** A key that cannot be queued: an empty cluster name, or an operator, namespace or name that is not a valid part. */
export class InvalidKeyError extends Error {
  override name = "InvalidKeyError";
}

/** One object by namespace and name, as controller-runtime's `types.NamespacedName`. `namespace` is "" for cluster-scoped objects. */
export interface NamespacedName {
  readonly namespace: string;
  readonly name: string;
}

/**
 * What the shared queue holds: the object `request` of `operator` (hence of its resource: each operator reconciles
 * exactly one resource, so two operators of one resource never share a key) in `cluster`.
 *
 * Two keys are the same key when their four parts are equal; the queue compares them by value, never by identity.
 */
export interface QueueKey {
  readonly cluster: string;
  readonly operator: string;
  readonly request: NamespacedName;
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
  const { cluster, operator, request: { namespace, name } } = key;
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

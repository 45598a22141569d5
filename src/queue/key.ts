// Queue keys: `cluster/operator/namespace/name` strings, built and split in one place.

/** A key that does not have the `cluster/operator/namespace/name` shape. */
export class InvalidKeyError extends Error {
  override name = "InvalidKeyError";
}

/** The four parts of a queue key. `namespace` is "" for cluster-scoped objects. */
export interface KeyParts {
  cluster: string;
  /** The operator (hence the resource) the object belongs to. */
  operator: string;
  namespace: string;
  name: string;
}

/**
 * Builds the queue key `cluster/operator/namespace/name`. The operator names the resource: each
 * operator reconciles exactly one resource, so two operators of one resource never share a key.
 *
 * Guarantees: `splitKey(makeKey(c, o, ns, n))` returns `c`, `o`, `ns` and `n` again, also for a cluster
 * name holding "/" (an inventory's `namespace/name`, an EKS context `arn:…:cluster/x`): keys are split
 * from the right.
 * Assumptions: Kubernetes names and namespaces never contain "/", and neither do operator names
 * (checked when defined). Any of them containing "/", or an empty cluster name, throws.
 */
export function makeKey(cluster: string, operator: string, namespace: string, name: string): string {
  if (cluster === "") throw bad("cluster name", cluster);
  if (operator === "" || operator.includes("/")) throw bad("operator name", operator);
  if (namespace.includes("/")) {
    throw new InvalidKeyError(`cannot build a queue key: namespace must not contain "/", got ${q(namespace)}`);
  }
  if (name === "" || name.includes("/")) throw bad("name", name);
  return `${cluster}/${operator}/${namespace}/${name}`;
}

/** Splits a key made by `makeKey`, from the right. Throws InvalidKeyError when it does not have four parts. */
export function splitKey(key: string): KeyParts {
  const c = key.lastIndexOf("/");
  const b = c <= 0 ? -1 : key.lastIndexOf("/", c - 1);
  const a = b <= 0 ? -1 : key.lastIndexOf("/", b - 1);
  if (a <= 0 || b <= a + 1 || c < 0 || c === key.length - 1) {
    throw new InvalidKeyError(`cannot split queue key: expected "cluster/operator/namespace/name", got ${q(key)}`);
  }
  return {
    cluster: key.slice(0, a),
    operator: key.slice(a + 1, b),
    namespace: key.slice(b + 1, c),
    name: key.slice(c + 1),
  };
}

/**
 * The cluster part of a key: everything before the third "/" from the right (a cluster name may hold "/").
 * Cheaper than `splitKey`, for the hot path. Throws InvalidKeyError when there is no non-empty cluster part.
 */
export function clusterOf(key: string): string {
  const a = operatorStart(key) - 1;
  if (a <= 0) throw new InvalidKeyError(`cannot find the cluster of queue key: no "cluster/" prefix in ${q(key)}`);
  return key.slice(0, a);
}

/** The operator part of a key made by `makeKey` (the second part from the left), for per-operator metrics. */
export function operatorOf(key: string): string {
  const start = operatorStart(key);
  const b = key.lastIndexOf("/", key.lastIndexOf("/") - 1);
  if (start <= 1 || b <= start) throw new InvalidKeyError(`cannot find the operator of queue key ${q(key)}`);
  return key.slice(start, b);
}

/** Where the operator part starts: after the third "/" from the right; 0 when the key has fewer. */
function operatorStart(key: string): number {
  const c = key.lastIndexOf("/");
  const b = c <= 0 ? -1 : key.lastIndexOf("/", c - 1);
  const a = b <= 0 ? -1 : key.lastIndexOf("/", b - 1);
  return a + 1;
}

function bad(what: string, value: string): InvalidKeyError {
  return new InvalidKeyError(`cannot build a queue key: ${what} must be non-empty without "/", got ${q(value)}`);
}

function q(s: string): string {
  return JSON.stringify(s);
}

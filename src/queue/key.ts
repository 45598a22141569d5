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
 * Guarantees: `splitKey(makeKey(c, o, ns, n))` returns `c`, `o`, `ns` and `n` again.
 * Assumptions: Kubernetes names and namespaces never contain "/", and neither do cluster names
 * (kubeconfig context names chosen by the hub) or operator names (checked when defined). Any of
 * them containing "/" throws.
 */
export function makeKey(cluster: string, operator: string, namespace: string, name: string): string {
  if (cluster === "" || cluster.includes("/")) throw bad("cluster name", cluster);
  if (operator === "" || operator.includes("/")) throw bad("operator name", operator);
  if (namespace.includes("/")) {
    throw new InvalidKeyError(`cannot build a queue key: namespace must not contain "/", got ${q(namespace)}`);
  }
  if (name === "" || name.includes("/")) throw bad("name", name);
  return `${cluster}/${operator}/${namespace}/${name}`;
}

/** Splits a key made by `makeKey`. Throws InvalidKeyError when it does not have four parts. */
export function splitKey(key: string): KeyParts {
  const a = key.indexOf("/");
  const b = a < 0 ? -1 : key.indexOf("/", a + 1);
  const c = b < 0 ? -1 : key.indexOf("/", b + 1);
  if (a <= 0 || b <= a + 1 || c < 0 || c === key.length - 1 || key.indexOf("/", c + 1) >= 0) {
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
 * The cluster part of a key: everything before the first "/". Cheaper than `splitKey`, for the
 * hot path. Throws InvalidKeyError when there is no non-empty cluster part.
 */
export function clusterOf(key: string): string {
  const a = key.indexOf("/");
  if (a <= 0) throw new InvalidKeyError(`cannot find the cluster of queue key: no "cluster/" prefix in ${q(key)}`);
  return key.slice(0, a);
}

/** The operator part of a key made by `makeKey` (between the first and second "/"), for per-operator metrics. */
export function operatorOf(key: string): string {
  const a = key.indexOf("/");
  const b = a < 0 ? -1 : key.indexOf("/", a + 1);
  if (a <= 0 || b <= a + 1) throw new InvalidKeyError(`cannot find the operator of queue key ${q(key)}`);
  return key.slice(a + 1, b);
}

function bad(what: string, value: string): InvalidKeyError {
  return new InvalidKeyError(`cannot build a queue key: ${what} must be non-empty without "/", got ${q(value)}`);
}

function q(s: string): string {
  return JSON.stringify(s);
}

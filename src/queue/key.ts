// Queue keys: `cluster/namespace/name` strings, built and split in one place.

/** A key that does not have the `cluster/namespace/name` shape. */
export class InvalidKeyError extends Error {
  override name = "InvalidKeyError";
}

/** The three parts of a queue key. `namespace` is "" for cluster-scoped objects. */
export interface KeyParts {
  cluster: string;
  namespace: string;
  name: string;
}

/**
 * Builds the queue key `cluster/namespace/name`.
 *
 * Guarantees: `splitKey(makeKey(c, ns, n))` returns `c`, `ns` and `n` again.
 * Assumptions: Kubernetes names and namespaces never contain "/", and neither do cluster names
 * (they are kubeconfig context names chosen by the hub). Any of them containing "/" throws.
 */
export function makeKey(cluster: string, namespace: string, name: string): string {
  if (cluster === "" || cluster.includes("/")) {
    throw new InvalidKeyError(
      `cannot build a queue key: cluster name must be non-empty without "/", got ${q(cluster)}`,
    );
  }
  if (namespace.includes("/")) {
    throw new InvalidKeyError(`cannot build a queue key: namespace must not contain "/", got ${q(namespace)}`);
  }
  if (name === "" || name.includes("/")) {
    throw new InvalidKeyError(`cannot build a queue key: name must be non-empty without "/", got ${q(name)}`);
  }
  return `${cluster}/${namespace}/${name}`;
}

/** Splits a key made by `makeKey`. Throws InvalidKeyError when it does not have three parts. */
export function splitKey(key: string): KeyParts {
  const a = key.indexOf("/");
  const b = a < 0 ? -1 : key.indexOf("/", a + 1);
  if (a <= 0 || b < 0 || b === key.length - 1 || key.indexOf("/", b + 1) >= 0) {
    throw new InvalidKeyError(`cannot split queue key: expected "cluster/namespace/name", got ${q(key)}`);
  }
  return { cluster: key.slice(0, a), namespace: key.slice(a + 1, b), name: key.slice(b + 1) };
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

function q(s: string): string {
  return JSON.stringify(s);
}

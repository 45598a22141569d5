// The pod's own cluster: its service-account token (re-read on rotation), CA and namespace, and the service address.

import { join } from "node:path";
import { envGetter, type EnvSource, unreadable } from "./_fields.ts";
import { KubeconfigAccess } from "./_kubeconfig_access.ts";
import type { ClusterAccess } from "./cluster_access.ts";
import { ConfigError } from "../errors.ts";

/**
 * The keyword for the pod's own cluster in `--clusters`.
 *
 * @example
 * ```ts
 * import { IN_CLUSTER, loadContexts } from "../../../kube.ts";
 *
 * // `--clusters in-cluster,prod`: the pod's own cluster and a kubeconfig context.
 * const catalog = await loadContexts({ env: Deno.env.toObject() });
 * const accesses = catalog.select([IN_CLUSTER, "prod"]);
 * console.log(accesses.map((a) => a.name)); // ["in-cluster", "prod"]
 * ```
 */
export const IN_CLUSTER = "in-cluster";
/** Where Kubernetes mounts a pod's service-account token, CA and namespace. */
export const SERVICE_ACCOUNT_ROOT = "/var/run/secrets/kubernetes.io/serviceaccount";

/**
 * Where the pod's service account lives, and the environment to read the service address from.
 *
 * @example
 * ```ts
 * import { inClusterAccess, type InClusterOptions } from "../../../kube.ts";
 *
 * // A test's stand-in pod: the service address, and a folder holding token, ca.crt and namespace.
 * const options: InClusterOptions = {
 *   root: "/tmp/test-pod/serviceaccount",
 *   env: { KUBERNETES_SERVICE_HOST: "10.96.0.1", KUBERNETES_SERVICE_PORT: "443" },
 * };
 * const access = inClusterAccess(options);
 * console.log(access.server); // https://10.96.0.1:443
 * ```
 */
export interface InClusterOptions {
  /** Default `/var/run/secrets/kubernetes.io/serviceaccount`. */
  root?: string;
  /** Where `KUBERNETES_SERVICE_HOST` and `_PORT` are read from. */
  env?: EnvSource;
}

/**
 * The pod's own cluster, from its service-account files and `KUBERNETES_SERVICE_HOST`/`_PORT`.
 *
 * Guarantees: the token file is re-read as soon as kubelet rotates it (see TokenFile), not on
 * client-node's fixed 60 s period. Throws ConfigError when the environment or files say the
 * process is not running in a pod.
 *
 * @example
 * ```ts
 * import { inClusterAccess, KubeClient } from "../../../kube.ts";
 *
 * const access = inClusterAccess({ env: (key) => Deno.env.get(key) });
 * using client = new KubeClient(access);
 * const namespace = access.namespace ?? "default";
 * const pods = await client.listPage(`/api/v1/namespaces/${namespace}/pods`, { limit: 10 });
 * console.log(pods.items.length);
 * ```
 */
export function inClusterAccess(options: InClusterOptions = {}): ClusterAccess {
  const root = options.root ?? SERVICE_ACCOUNT_ROOT;
  const env = envGetter(options.env);
  const host = env("KUBERNETES_SERVICE_HOST");
  const port = env("KUBERNETES_SERVICE_PORT");
  if (!host || !port) {
    throw new ConfigError(
      `cannot use "${IN_CLUSTER}": KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not set, so the hub is not running in a pod`,
    );
  }
  const tokenPath = join(root, "token");
  const caPath = join(root, "ca.crt");
  for (const p of [tokenPath, caPath]) {
    const problem = unreadable(p);
    if (problem) {
      throw new ConfigError(
        `cannot use "${IN_CLUSTER}": ${p}: ${problem}; the hub is not running in a pod with a service account token mounted`,
      );
    }
  }
  let namespace: string | undefined;
  try {
    namespace = Deno.readTextFileSync(join(root, "namespace")).trim() || undefined;
  } catch {
    namespace = undefined;
  }
  const bracketed = host.includes(":") && !host.startsWith("[") ? `[${host}]` : host;
  const server = `https://${bracketed}:${port}`;
  return new KubeconfigAccess({
    name: IN_CLUSTER,
    server,
    source: root,
    namespace,
    cluster: { name: IN_CLUSTER, server, caFile: caPath, skipTLSVerify: false },
    user: { name: IN_CLUSTER },
    tokenFile: tokenPath,
  });
}

// The pod's own cluster: its service-account token (re-read on rotation), CA and namespace, and the service address.

import { join } from "node:path";
import { envGetter, type EnvSource, unreadable } from "./_fields.ts";
import { KubeconfigAccess } from "./_kubeconfig_access.ts";
import type { ClusterAccess } from "./cluster_access.ts";
import { ConfigError } from "./errors.ts";

/** The keyword for the pod's own cluster in `--clusters`. */
export const IN_CLUSTER = "in-cluster";
/** Where Kubernetes mounts a pod's service-account token, CA and namespace. */
export const SERVICE_ACCOUNT_ROOT = "/var/run/secrets/kubernetes.io/serviceaccount";

/** Where the pod's service account lives, and the environment to read the service address from. */
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

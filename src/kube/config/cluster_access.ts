// How to reach and authenticate to one cluster: the ClusterAccess contract every source of clusters implements.

/**
 * TLS material and headers to send on every request to one cluster. PEM strings throughout.
 *
 * @example
 * ```ts
 * import type { ClusterAuth } from "../../../kube.ts";
 *
 * // Mutual TLS against a private CA: no header needed.
 * const auth: ClusterAuth = {
 *   headers: {},
 *   caCerts: [await Deno.readTextFile("/etc/lab/ca.crt")],
 *   cert: await Deno.readTextFile("/etc/lab/client.crt"),
 *   key: await Deno.readTextFile("/etc/lab/client.key"),
 *   insecureSkipTlsVerify: false,
 * };
 * ```
 */
export interface ClusterAuth {
  /** Per-request headers, typically `Authorization`, maybe `Impersonate-User`. */
  headers: Record<string, string>;
  /** Certificate authorities to trust for the server, in addition to none: when absent, the system roots. */
  caCerts?: string[];
  /** Client certificate chain (mutual TLS). */
  cert?: string;
  /** Client private key (mutual TLS). */
  key?: string;
  /** `insecure-skip-tls-verify`: do not verify the server's certificate. */
  insecureSkipTlsVerify: boolean;
}

/**
 * How to reach and authenticate to one cluster.
 *
 * Guarantees: `auth()` asks client-node afresh on every call (concurrent calls share one run),
 * so a rotated token file or an expired exec credential is picked up without a restart;
 * client-node itself re-runs an exec plugin only once its `expirationTimestamp` has passed.
 * Errors from `auth()` are {@link AuthError}s that never contain credentials or plugin output.
 *
 * @example
 * ```ts
 * import { type ClusterAccess, KubeClient } from "../../../kube.ts";
 *
 * // A cluster reached with a token from the environment (loadContexts and inClusterAccess build these for you).
 * const lab: ClusterAccess = {
 *   name: "lab",
 *   server: "https://10.0.0.1:6443",
 *   source: "LAB_TOKEN",
 *   auth: () =>
 *     Promise.resolve({
 *       headers: { Authorization: `Bearer ${Deno.env.get("LAB_TOKEN")}` },
 *       insecureSkipTlsVerify: false,
 *     }),
 * };
 * using client = new KubeClient(lab);
 * ```
 */
export interface ClusterAccess {
  /** Context name, or `in-cluster`. */
  readonly name: string;
  /** API server base URL without a trailing slash, e.g. `https://10.0.0.1:6443`. */
  readonly server: string;
  /** Where the context came from: the kubeconfig file, or the service-account directory. */
  readonly source: string;
  /** The context's default namespace (the pod's namespace for in-cluster), if any. */
  readonly namespace?: string;
  /**
   * Set when the context opted in to namespaced access (its `operator-hub` extension, see _context_scope.ts): the
   * hub lists, watches and checks its rights in this one namespace only, so a Role is enough. Unset: cluster-wide.
   */
  readonly namespaceScope?: string;
  /** The cluster's `proxy-url`, if any. */
  readonly proxyUrl?: string;
  /**
   * The cluster's `tls-server-name`, if any: the name sent as SNI and checked against the server's certificate instead
   * of the URL's host (an apiserver reached by IP or through a tunnel whose certificate names its DNS name).
   */
  readonly tlsServerName?: string;
  /** The headers and TLS material to use now (fresh credentials: rotated tokens, re-run exec plugins). */
  auth(): Promise<ClusterAuth>;
  /** Drops cached credentials (exec tokens, token file contents); clients call it after a 401. */
  invalidate?(): void;
}

/**
 * A cheap digest of the TLS material in `auth`, so a client rebuilds its HTTP client only when
 * certificates change. Not reversible to the key; equal inputs give equal digests.
 */
export function tlsFingerprint(auth: ClusterAuth): string {
  const parts = [auth.insecureSkipTlsVerify ? "1" : "0", ...(auth.caCerts ?? []), "\0", auth.cert ?? "", "\0"];
  parts.push(auth.key ?? "");
  return fnv64(parts.join("\u0001"));
}

/** 64-bit FNV-1a as two 32-bit halves, hex. */
function fnv64(s: string): string {
  let h1 = 0x811c9dc5;
  let h2 = 0x050c5d1f;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 0x01000193) >>> 0;
    h2 = Math.imul(h2 ^ c, 0x5bd1e995) >>> 0;
  }
  return h1.toString(16).padStart(8, "0") + h2.toString(16).padStart(8, "0");
}

// How a local control plane is started (the test kit's clusters and dev/clusters alike): the kube-apiserver and
// kube-controller-manager flags, the controller manager's client certificate and kubeconfig, the service-account key.
//
// Guarantees:
// - {@linkcode apiserverFlags} and {@linkcode controllerManagerFlags} return the same flags in the same order for the
//   same inputs (dev/clusters compares a running process's flags with them to decide whether to restart it).
// - The controller manager authenticates with a client certificate for `system:kube-controller-manager` (the identity
//   the bootstrap RBAC policy grants), signed by a local client CA the apiservers trust; each controller then works
//   as its own ServiceAccount (`--use-service-account-credentials`).
// - Keys and certificates are written with mode 0600 and never printed.

/** Issuer of service-account tokens, as envtest and kubeadm use. */
export const SERVICE_ACCOUNT_ISSUER = "https://kubernetes.default.svc.cluster.local";
/** The user name of the controller manager's client certificate (its common name). */
export const CONTROLLER_MANAGER_USER = "system:kube-controller-manager";

/**
 * Controllers of `*` (what kind runs, less its two extra bootstrap-token controllers) that are turned off, each
 * because it needs nodes, a kubelet or a cloud:
 * - daemonset-controller: places one pod per node; with no node it has nothing to do.
 * - node-ipam-, node-lifecycle-, taint-eviction-, device-taint-eviction-, ttl-controller: manage Node objects.
 * - persistentvolume-attach-detach-, persistentvolume-expander-controller: attach and grow volumes on nodes.
 * - cloud-node-lifecycle-, node-route-, service-lb-controller: need a cloud provider.
 * Everything else runs: namespace, garbage-collector, serviceaccount, serviceaccount-token,
 * root-ca-certificate-publisher, clusterrole-aggregation, deployment, replicaset, replicationcontroller,
 * statefulset, job, cronjob, ttl-after-finished, horizontal-pod-autoscaler, disruption, resourcequota, endpoints,
 * endpointslice, endpointslice-mirroring, service-cidr, pod-garbage-collector, the certificate-signing-request
 * controllers (signing with the local client CA), the volume protection finalizers, persistentvolume-binder,
 * ephemeral-volume, resourceclaim, legacy-serviceaccount-token-cleaner and validatingadmissionpolicy-status; those
 * behind feature gates that are off by default stay off by themselves. Pods are created (e.g. by a Deployment's
 * ReplicaSet) but stay Pending: there is no scheduler and no node.
 */
export const DISABLED_CONTROLLERS: readonly string[] = [
  "daemonset-controller",
  "node-ipam-controller",
  "node-lifecycle-controller",
  "taint-eviction-controller",
  "device-taint-eviction-controller",
  "ttl-controller",
  "persistentvolume-attach-detach-controller",
  "persistentvolume-expander-controller",
  "cloud-node-lifecycle-controller",
  "node-route-controller",
  "service-lb-controller",
];

/** What a kube-apiserver's command line is made from. */
export interface ApiserverFlagInputs {
  /** HTTPS port on 127.0.0.1. */
  port: number;
  /** Where it writes its self-signed serving certificate (apiserver.crt, which covers 127.0.0.1). */
  certDir: string;
  etcdUrl: string;
  /** Its objects' etcd prefix (one etcd serves several apiservers). */
  etcdPrefix: string;
  /** Static token file (`token,user,uid,"group,..."` lines). */
  tokenFile: string;
  /** The client CA it trusts for client certificates. */
  clientCaFile: string;
  /** PKCS#8 key that signs and verifies service-account tokens. */
  serviceAccountKey: string;
}

/** The full kube-apiserver command line (envtest-style flags). */
export function apiserverFlags(f: ApiserverFlagInputs): string[] {
  return [
    "--advertise-address=127.0.0.1",
    "--bind-address=127.0.0.1",
    `--secure-port=${f.port}`,
    `--cert-dir=${f.certDir}`,
    `--etcd-servers=${f.etcdUrl}`,
    `--etcd-prefix=${f.etcdPrefix}`,
    "--service-cluster-ip-range=10.0.0.0/24",
    "--allow-privileged=true",
    "--authorization-mode=RBAC",
    `--token-auth-file=${f.tokenFile}`,
    `--client-ca-file=${f.clientCaFile}`,
    `--service-account-issuer=${SERVICE_ACCOUNT_ISSUER}`,
    `--service-account-key-file=${f.serviceAccountKey}`,
    `--service-account-signing-key-file=${f.serviceAccountKey}`,
    "--enable-priority-and-fairness=false",
    "--endpoint-reconciler-type=none",
  ];
}

/** The files of a local client CA and of a client certificate signed by it. */
export interface ClientPki {
  caCert: string;
  caKey: string;
  cert: string;
  key: string;
}

/** What a kube-controller-manager's command line is made from. */
export interface ControllerManagerFlagInputs {
  kubeconfig: string;
  /** HTTPS port on 127.0.0.1 (/healthz). */
  port: number;
  certDir: string;
  serviceAccountKey: string;
  /** The apiserver's serving certificate, published as kube-root-ca.crt. */
  rootCaFile: string;
  /** The client CA, which signs CertificateSigningRequests. */
  pki: ClientPki;
}

/** The full kube-controller-manager command line. */
export function controllerManagerFlags(f: ControllerManagerFlagInputs): string[] {
  return [
    // No --authentication-kubeconfig / --authorization-kubeconfig: its port then serves only the always-allowed
    // /healthz, /readyz and /livez, and it does not look for a front-proxy CA the local apiservers do not have.
    `--kubeconfig=${f.kubeconfig}`,
    "--bind-address=127.0.0.1",
    `--secure-port=${f.port}`,
    `--cert-dir=${f.certDir}`,
    "--leader-elect=false",
    "--use-service-account-credentials=true",
    `--controllers=${["*", ...DISABLED_CONTROLLERS.map((name) => `-${name}`)].join(",")}`,
    `--service-account-private-key-file=${f.serviceAccountKey}`,
    `--root-ca-file=${f.rootCaFile}`,
    `--cluster-signing-cert-file=${f.pki.caCert}`,
    `--cluster-signing-key-file=${f.pki.caKey}`,
  ];
}

/** The kubeconfig YAML of a controller manager: the apiserver by URL and CA file, its client certificate by path. */
export function controllerManagerKubeconfig(
  cluster: { name: string; url: string; caFile: string },
  pki: ClientPki,
  header = "# Generated by the operator-hub test kit: the kube-controller-manager's own credentials. Do not commit.",
): string {
  const q = (s: string) => JSON.stringify(s);
  return [
    header,
    "apiVersion: v1",
    "kind: Config",
    "clusters:",
    `  - name: ${q(cluster.name)}`,
    "    cluster:",
    `      server: ${q(cluster.url)}`,
    `      certificate-authority: ${q(cluster.caFile)}`,
    "users:",
    `  - name: ${q(CONTROLLER_MANAGER_USER)}`,
    "    user:",
    `      client-certificate: ${q(pki.cert)}`,
    `      client-key: ${q(pki.key)}`,
    "contexts:",
    `  - name: ${q(cluster.name)}`,
    "    context:",
    `      cluster: ${q(cluster.name)}`,
    `      user: ${q(CONTROLLER_MANAGER_USER)}`,
    `current-context: ${q(cluster.name)}`,
    "",
  ].join("\n");
}

/** The controller manager's client certificate could not be written. */
export class ClientPkiError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "ClientPkiError";
  }
}

/**
 * Creates the client CA (once) and a client certificate for `cn` (when missing or stale) with the local-pki binary.
 */
export async function ensureClientPki(pkiBinary: string, pki: ClientPki, cn = CONTROLLER_MANAGER_USER): Promise<void> {
  const out = await new Deno.Command(pkiBinary, {
    args: [`-ca-cert=${pki.caCert}`, `-ca-key=${pki.caKey}`, `-cert=${pki.cert}`, `-key=${pki.key}`, `-cn=${cn}`],
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output().catch((cause) => {
    throw new ClientPkiError(`could not run ${pkiBinary} (are the control-plane binaries built?)`, { cause });
  });
  if (!out.success) {
    throw new ClientPkiError(
      `${pkiBinary} exited with code ${out.code}: ${new TextDecoder().decode(out.stderr).trim()}`,
    );
  }
}

/** Writes an RSA-2048 PKCS#8 key for signing and verifying service-account tokens (mode 0600), unless one exists. */
export async function ensureServiceAccountKey(path: string): Promise<void> {
  try {
    await Deno.stat(path);
    return;
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
  const pair = await crypto.subtle.generateKey(
    { name: "RSASSA-PKCS1-v1_5", modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]), hash: "SHA-256" },
    true,
    ["sign", "verify"],
  );
  const der = new Uint8Array(await crypto.subtle.exportKey("pkcs8", pair.privateKey));
  const base64 = btoa(String.fromCharCode(...der)).replace(/.{64}/g, "$&\n").trimEnd();
  const tmp = `${path}.tmp-${crypto.randomUUID().slice(0, 8)}`;
  await Deno.writeTextFile(tmp, `-----BEGIN PRIVATE KEY-----\n${base64}\n-----END PRIVATE KEY-----\n`, { mode: 0o600 });
  await Deno.rename(tmp, path);
}

/**
 * True when the controller manager serving on `port` answers /healthz with 200 within `timeoutMs`; its serving
 * certificate is self-signed into `certDir` (kube-controller-manager.crt), which is the only CA trusted.
 *
 * @example
 * ```ts
 * import { controllerManagerHealthy } from "./control_plane.ts";
 * console.log(await controllerManagerHealthy({ certDir: "/tmp/cm/certs", port: 10257 }, 500)); // false: nothing there
 * ```
 */
export async function controllerManagerHealthy(
  manager: { certDir: string; port: number },
  timeoutMs = 2_000,
): Promise<boolean> {
  let client: Deno.HttpClient | undefined;
  try {
    client = Deno.createHttpClient({
      caCerts: [await Deno.readTextFile(`${manager.certDir}/kube-controller-manager.crt`)],
    });
    const response = await fetch(`https://127.0.0.1:${manager.port}/healthz`, {
      client,
      signal: AbortSignal.timeout(timeoutMs),
    });
    await response.body?.cancel();
    return response.status === 200;
  } catch {
    return false;
  } finally {
    client?.close();
  }
}

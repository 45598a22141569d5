// Private to dev/clusters: the kube-controller-manager beside each local apiserver: its client certificate, kubeconfig,
// flags, start, and the probes `clusters:up` waits on.
//
// Guarantees:
// - The controller manager authenticates with a client certificate for the user `system:kube-controller-manager`
//   (the identity the bootstrap RBAC policy grants), signed by the local client CA that every apiserver trusts
//   (`--client-ca-file`); each controller then works as its own ServiceAccount (`--use-service-account-credentials`),
//   with the RBAC role of a real cluster's controller.
// - It runs the controllers a kind cluster runs (`*`) minus those that need nodes or a cloud
//   ({@linkcode DISABLED_CONTROLLERS}), without leader election, on its own loopback port.
// - {@linkcode probeNamespaceDeletion} passes only when a namespace it creates and deletes is really gone (the
//   namespace controller removed its `kubernetes` finalizer), so `clusters:up` never hands out a cluster whose
//   namespaces would stay Terminating.

import type { ApiserverResponse } from "./_apiserver.ts";
import type { ApiserverRecord } from "./_state.ts";
import { KUBE_BIN_DIR } from "../build/build.ts";
import { isOurProcess, logTail, spawnDetached, waitPortFree } from "./_process.ts";
import { setTimeout as sleep } from "node:timers/promises";

/** The controller-manager binary built by dev/build/build.ts. */
export const CONTROLLER_MANAGER_BINARY = `${KUBE_BIN_DIR}/kube-controller-manager`;
/** The small certificate tool built beside it (dev/build/cmd/local-pki). */
export const PKI_BINARY = `${KUBE_BIN_DIR}/local-pki`;
/** The user name of the controller manager's client certificate (its common name). */
export const CONTROLLER_MANAGER_USER = "system:kube-controller-manager";
/** The controller manager of the cluster on apiserver port P listens on P + this (prod 17443, staging 17444, ...). */
export const CONTROLLER_MANAGER_PORT_DELTA = 1000;

/**
 * Controllers of `*` (what kind runs, less its two extra bootstrap-token controllers) that are turned off here,
 * each because it needs nodes, a kubelet or a cloud:
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

/** The files of the local client CA and of the controller manager's client certificate (shared by every cluster). */
export interface ClientPki {
  caCert: string;
  caKey: string;
  cert: string;
  key: string;
}

/** One kube-controller-manager as recorded in the state file. */
export interface ControllerManagerRecord {
  /** The cluster (apiserver) it manages. */
  cluster: string;
  pid: number | null;
  /** Its HTTPS port on 127.0.0.1 (/healthz). */
  port: number;
  /** Its kubeconfig (client certificate, the apiserver's serving certificate as CA). */
  kubeconfig: string;
  /** Where it keeps its self-signed serving certificate. */
  certDir: string;
  logFile: string;
}

/** The controller manager could not be started or did not do its job. */
export class ControllerManagerError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "ControllerManagerError";
  }
}

/** A new record for the controller manager of `apiserver` (nothing started). */
export function newControllerManagerRecord(apiserver: ApiserverRecord): ControllerManagerRecord {
  const dir = `${apiserver.dir}/controller-manager`;
  return {
    cluster: apiserver.name,
    pid: null,
    port: apiserver.port + CONTROLLER_MANAGER_PORT_DELTA,
    kubeconfig: `${dir}/kubeconfig.yaml`,
    certDir: `${dir}/certs`,
    logFile: `${dir}/controller-manager.log`,
  };
}

/** Creates the client CA (once) and the controller manager's client certificate (when missing or stale). */
export async function ensureClientPki(pki: ClientPki): Promise<void> {
  const out = await new Deno.Command(PKI_BINARY, {
    args: [
      `-ca-cert=${pki.caCert}`,
      `-ca-key=${pki.caKey}`,
      `-cert=${pki.cert}`,
      `-key=${pki.key}`,
      `-cn=${CONTROLLER_MANAGER_USER}`,
    ],
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output().catch((cause) => {
    throw new ControllerManagerError(`could not run ${PKI_BINARY} (run \`deno run -A dev/build/build.ts\`)`, {
      cause,
    });
  });
  if (!out.success) {
    throw new ControllerManagerError(
      `${PKI_BINARY} exited with code ${out.code}: ${new TextDecoder().decode(out.stderr).trim()}`,
    );
  }
}

/** The kubeconfig YAML of the controller manager of `apiserver`: its client certificate and key by path. */
export function controllerManagerKubeconfig(apiserver: ApiserverRecord, pki: ClientPki): string {
  const q = (s: string) => JSON.stringify(s);
  return [
    "# Generated by dev/clusters/clusters.ts: the kube-controller-manager's own credentials. Do not commit.",
    "apiVersion: v1",
    "kind: Config",
    "clusters:",
    `  - name: ${q(apiserver.name)}`,
    "    cluster:",
    `      server: ${q(apiserver.url)}`,
    `      certificate-authority: ${q(apiserver.caFile)}`,
    "users:",
    `  - name: ${q(CONTROLLER_MANAGER_USER)}`,
    "    user:",
    `      client-certificate: ${q(pki.cert)}`,
    `      client-key: ${q(pki.key)}`,
    "contexts:",
    `  - name: ${q(apiserver.name)}`,
    "    context:",
    `      cluster: ${q(apiserver.name)}`,
    `      user: ${q(CONTROLLER_MANAGER_USER)}`,
    `current-context: ${q(apiserver.name)}`,
    "",
  ].join("\n");
}

/** The full kube-controller-manager command line for the cluster of `apiserver`. */
export function controllerManagerArgs(
  record: ControllerManagerRecord,
  apiserver: ApiserverRecord,
  pki: ClientPki,
  serviceAccountKey: string,
): string[] {
  return [
    // No --authentication-kubeconfig / --authorization-kubeconfig: its port then serves only the always-allowed
    // /healthz, /readyz and /livez, and it does not look for a front-proxy CA the local apiservers do not have.
    `--kubeconfig=${record.kubeconfig}`,
    "--bind-address=127.0.0.1",
    `--secure-port=${record.port}`,
    `--cert-dir=${record.certDir}`,
    "--leader-elect=false",
    "--use-service-account-credentials=true",
    `--controllers=${["*", ...DISABLED_CONTROLLERS.map((name) => `-${name}`)].join(",")}`,
    `--service-account-private-key-file=${serviceAccountKey}`,
    `--root-ca-file=${apiserver.caFile}`,
    `--cluster-signing-cert-file=${pki.caCert}`,
    `--cluster-signing-key-file=${pki.caKey}`,
  ];
}

/** The controller-manager process of `record` is alive (whatever its health). */
export function controllerManagerAlive(record: ControllerManagerRecord): boolean {
  return isOurProcess(record.pid, CONTROLLER_MANAGER_BINARY, `--secure-port=${record.port}`);
}

/** Writes the kubeconfig and starts the process detached; records its pid. */
export async function spawnControllerManager(
  record: ControllerManagerRecord,
  apiserver: ApiserverRecord,
  pki: ClientPki,
  serviceAccountKey: string,
): Promise<void> {
  await waitPortFree(record.port, `kube-controller-manager of cluster "${record.cluster}"`);
  await Deno.mkdir(record.certDir, { recursive: true, mode: 0o700 });
  await Deno.writeTextFile(record.kubeconfig, controllerManagerKubeconfig(apiserver, pki), { mode: 0o600 });
  await Deno.writeTextFile(record.logFile, `--- started ${new Date().toISOString()}\n`, { append: true });
  record.pid = await spawnDetached(
    CONTROLLER_MANAGER_BINARY,
    controllerManagerArgs(record, apiserver, pki, serviceAccountKey),
    record.logFile,
  );
}

/** True when the controller manager answers /healthz with 200 (its serving certificate is self-signed). */
export async function controllerManagerHealthy(record: ControllerManagerRecord, timeoutMs = 2_000): Promise<boolean> {
  let client: Deno.HttpClient | undefined;
  try {
    client = Deno.createHttpClient({
      caCerts: [await Deno.readTextFile(`${record.certDir}/kube-controller-manager.crt`)],
    });
    const response = await fetch(`https://127.0.0.1:${record.port}/healthz`, {
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

/** Sends one admin request to the cluster's apiserver (clusters.ts's `apiserverRequest`, passed in). */
export type AdminRequest = (
  path: string,
  init?: { method?: string; body?: string; contentType?: string },
) => Promise<ApiserverResponse>;

/**
 * Creates namespace `operator-hub-probe-<random>`, deletes it, and resolves with the seconds until it was gone.
 *
 * Throws a ControllerManagerError when it is still there after `timeoutMs` (its phase and conditions and the last
 * lines of the controller manager's log in the message), or when the controller manager process exits meanwhile.
 */
export async function probeNamespaceDeletion(
  record: ControllerManagerRecord,
  request: AdminRequest,
  timeoutMs: number,
): Promise<number> {
  const name = `operator-hub-probe-${crypto.randomUUID().slice(0, 8)}`;
  const created = await request("/api/v1/namespaces", {
    method: "POST",
    contentType: "application/json",
    body: JSON.stringify({ apiVersion: "v1", kind: "Namespace", metadata: { name } }),
  });
  if (created.status !== 201) {
    throw new ControllerManagerError(
      `could not create probe namespace ${name} in cluster "${record.cluster}": HTTP ${created.status} ${created.body}`,
    );
  }
  const started = performance.now();
  const deleted = await request(`/api/v1/namespaces/${name}`, { method: "DELETE" });
  if (deleted.status !== 200 && deleted.status !== 202) {
    throw new ControllerManagerError(
      `could not delete probe namespace ${name} in cluster "${record.cluster}": HTTP ${deleted.status} ${deleted.body}`,
    );
  }
  while (true) {
    const got = await request(`/api/v1/namespaces/${name}`);
    if (got.status === 404) return (performance.now() - started) / 1000;
    if (!controllerManagerAlive(record)) {
      throw new ControllerManagerError(
        `kube-controller-manager of cluster "${record.cluster}" (pid ${record.pid}) exited; last lines of ` +
          `${record.logFile}:\n${await logTail(record.logFile)}`,
      );
    }
    if (performance.now() - started > timeoutMs) {
      let detail = `HTTP ${got.status}`;
      try {
        const status = (JSON.parse(got.body) as { status?: { phase?: string; conditions?: unknown[] } }).status;
        detail = `phase ${status?.phase}, conditions ${JSON.stringify(status?.conditions ?? [])}`;
      } catch {
        // Keep the HTTP status.
      }
      throw new ControllerManagerError(
        `namespace ${name} in cluster "${record.cluster}" was not gone ${timeoutMs / 1000}s after its deletion ` +
          `(${detail}): is kube-controller-manager (pid ${record.pid}) running its namespace controller? Last lines ` +
          `of ${record.logFile}:\n${await logTail(record.logFile)}`,
      );
    }
    await sleep(100);
  }
}

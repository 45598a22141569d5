// Where the local clusters live and how long they may take: ports (with OPERATOR_HUB_PORT_OFFSET), paths, binaries.

import { KUBE_BIN_DIR, REPO_ROOT } from "../build/build.ts";
import type { ClientPki } from "./_controller_manager.ts";

/** Cluster names `up` starts when none are given. */
export const DEFAULT_CLUSTER_NAMES: readonly string[] = ["prod", "staging", "dev"];
/**
 * Added to every local port (and to the etcd data folder's name), so two checkouts on one machine can each run their
 * own clusters: `OPERATOR_HUB_PORT_OFFSET=100 deno task test`. Default 0.
 */
export const PORT_OFFSET: number = portOffset(Deno.env.get("OPERATOR_HUB_PORT_OFFSET"));
/** Secure port of the first default cluster; the others follow. */
export const FIRST_APISERVER_PORT = 16443 + PORT_OFFSET;
/** etcd client port (plain HTTP, loopback only). */
export const ETCD_CLIENT_PORT = 12379 + PORT_OFFSET;
/** etcd peer port. */
export const ETCD_PEER_PORT = 12380 + PORT_OFFSET;
/** Folder of the cluster state (ignored by git). */
export const STATE_DIR = `${REPO_ROOT}/.cache/clusters`;
/** The JSON state file. */
export const STATE_FILE = `${STATE_DIR}/state.json`;
/** The kubeconfig written by `up`. */
export const KUBECONFIG_PATH = `${REPO_ROOT}/clusters/local.yaml`;
/** Folder whose files are applied to every cluster. */
export const CRDS_DIR = `${REPO_ROOT}/crds`;
/** Field manager for every server-side apply of CRDs (so later applies fully replace earlier ones). */
export const CRD_FIELD_MANAGER = "operator-hub-clusters";
/** Issuer of service-account tokens, as envtest and kubeadm use. */
export { SERVICE_ACCOUNT_ISSUER } from "../../src/testing/control_plane.ts";

/** Serialises `up`, `down` and the single-process stops and starts. */
export const LOCK_FILE = `${REPO_ROOT}/.cache/clusters.lock`;
/** The kubeconfig `up` uses while it installs the CRDs, before clusters/local.yaml is written. */
export const STAGING_KUBECONFIG = `${STATE_DIR}/kubeconfig.yaml`;
/** The key that signs and verifies service-account tokens, shared by every apiserver and controller manager. */
export const SERVICE_ACCOUNT_KEY = `${STATE_DIR}/service-account.key`;
/** The client CA every local apiserver trusts, and the controller managers' client certificate signed by it. */
export const CLIENT_PKI: ClientPki = {
  caCert: `${STATE_DIR}/pki/client-ca.crt`,
  caKey: `${STATE_DIR}/pki/client-ca.key`,
  cert: `${STATE_DIR}/pki/kube-controller-manager.crt`,
  key: `${STATE_DIR}/pki/kube-controller-manager.key`,
};
/** A controller manager is healthy when a namespace it is asked to delete is gone within this time. */
export const NAMESPACE_DELETION_HEALTHY_MS = 10_000;
/** The kube-apiserver binary every local cluster runs. */
export const APISERVER_BINARY = `${KUBE_BIN_DIR}/kube-apiserver`;
/** The etcd binary of the shared etcd. */
export const ETCD_BINARY = `${KUBE_BIN_DIR}/etcd`;
/** Valid cluster names. */
export const NAME_PATTERN = /^[a-z]([-a-z0-9]{0,30}[a-z0-9])?$/;
/** How long a (re)started apiserver or controller manager may take to become ready. */
export const DEFAULT_READY_TIMEOUT_MS = 120_000;

function portOffset(raw: string | undefined): number {
  if (raw === undefined || raw === "") return 0;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0 || n > 40000) {
    throw new Error(`invalid OPERATOR_HUB_PORT_OFFSET "${raw}": expected a whole number from 0 to 40000`);
  }
  return n;
}

/** Where the etcd data lives: tmpfs when the machine has /dev/shm. */
export function etcdDataDir(): string {
  try {
    if (Deno.statSync("/dev/shm").isDirectory) {
      return PORT_OFFSET ? `/dev/shm/operator-hub-etcd-${PORT_OFFSET}` : "/dev/shm/operator-hub-etcd";
    }
  } catch {
    // No /dev/shm (macOS): fall back to the state folder.
  }
  return `${REPO_ROOT}/.cache/etcd-data`;
}

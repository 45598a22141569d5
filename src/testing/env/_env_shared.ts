// What every cluster of one test environment shares (binaries, etcd, folder, PKI): the cluster and its
// controller-manager both read it, and it imports neither.

import type { ClientPki } from "../control_plane.ts";
import type { KubeBinaries } from "../kube_binaries.ts";

/** What every cluster of one environment shares. */
export interface EnvShared {
  bins: KubeBinaries;
  etcdUrl: string;
  /** The environment's folder. */
  dir: string;
  pki: ClientPki;
  serviceAccountKey: string;
}

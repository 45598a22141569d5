// Starts, reuses, stops and reports the local test clusters: one shared etcd, and per cluster a real kube-apiserver
// with a real kube-controller-manager beside it.
//
// CLI: `deno run --allow-all dev/clusters/clusters.ts up [--names prod,staging,dev] | down | status`.
//
// Layout (all on 127.0.0.1):
// - etcd: client 12379, peer 12380 (every port plus OPERATOR_HUB_PORT_OFFSET when set), data on tmpfs (/dev/shm/operator-hub-etcd), log .cache/clusters/etcd.log.
// - apiservers: prod 16443, staging 16444, dev 16445, any other name the next free port from 16446; each stores its
//   objects under the etcd prefix `/registry-<name>` and keeps token file, serving certs and log in
//   .cache/clusters/<name>/.
// - controller managers: on the apiserver's port + 1000 (prod 17443, staging 17444, dev 17445), kubeconfig, serving
//   certs and log in .cache/clusters/<name>/controller-manager/; their client certificate (user
//   system:kube-controller-manager) and the client CA every apiserver trusts are in .cache/clusters/pki/. Which
//   controllers run, and why the others do not: dev/clusters/_controller_manager.ts.
// - .cache/clusters/state.json (mode 0600) records pids, ports, tokens and paths; clusters/local.yaml is the kubeconfig.
//
// Guarantees:
// - `up` is idempotent: a healthy cluster (live pid running our binary on its port, /readyz 200) is reused, a dead,
//   wedged, stale-binary or stale-flags one is restarted with the same port, token and certificates, a missing one is
//   started. The same holds for each cluster's controller manager, whose health is that a namespace created and
//   deleted is gone within 10 s. One that takes longer is reported with a warning (a loaded machine is slow, not
//   broken: restarting it would only add load); one whose namespace is still there after 120 s is restarted once.
// - Processes run detached in their own session and outlive the `deno` process; `down` stops every one of them
//   (SIGTERM, then SIGKILL after a grace period), including orphans of our binaries whose state was lost.
// - clusters/local.yaml is written last, only once every apiserver is ready, every CRD in crds/ is Established and
//   every controller manager has deleted a namespace.
// - Admin tokens are random per fresh cluster, kept in files of mode 0600, and never printed.
// - `up` and `down` serialise on an exclusive lock (.cache/clusters.lock).
//
// This file is the public surface and the CLI entry; the work is split by job:
// - _layout.ts: ports, paths, binaries and time limits; _state.ts: the state file, its records and the lock;
// - _etcd.ts, _apiserver.ts, _controller_manager.ts with _ensure_controller_manager.ts, _service_account_key.ts:
//   one kind of process each; _crds.ts and _kubeconfig.ts: what `up` installs and writes;
// - _up.ts, _down.ts, _status.ts: the operations; _cli.ts: the command line; build.ts: the binaries.

import { clustersCli } from "./_cli.ts";

export { type ControllerManagerRecord, DISABLED_CONTROLLERS } from "./_controller_manager.ts";
export {
  CLIENT_PKI,
  CRD_FIELD_MANAGER,
  CRDS_DIR,
  DEFAULT_CLUSTER_NAMES,
  ETCD_CLIENT_PORT,
  ETCD_PEER_PORT,
  etcdDataDir,
  FIRST_APISERVER_PORT,
  KUBECONFIG_PATH,
  NAMESPACE_DELETION_HEALTHY_MS,
  PORT_OFFSET,
  SERVICE_ACCOUNT_ISSUER,
  STATE_DIR,
  STATE_FILE,
} from "./_layout.ts";
export {
  type ApiserverRecord,
  clusterRecord,
  type ClustersState,
  controllerManagerRecord,
  type EtcdRecord,
  readState,
  readStateSync,
} from "./_state.ts";
export { ClusterSetupError } from "./_cluster_setup_error.ts";
export { etcdAlive } from "./_etcd.ts";
export {
  apiserverAlive,
  apiserverArgs,
  apiserverReady,
  apiserverRequest,
  type ApiserverResponse,
} from "./_apiserver.ts";
export { kubeconfigYaml } from "./_kubeconfig.ts";
export { applyCrds, crdFiles } from "./_crds.ts";
export { clustersUp, type LogOptions, type UpOptions, type UpReport } from "./_up.ts";
export { clustersDown, type DownReport } from "./_down.ts";
export { type ClustersStatus, clustersStatus, type ClusterStatus } from "./_status.ts";

if (import.meta.main) Deno.exit(await clustersCli(Deno.args));

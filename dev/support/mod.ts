// Public surface of dev/support: what tests/ and bench/ both use against the real local clusters (prod, staging, dev
// of `deno task clusters:up`): their endpoints and admin clients, kubectl, test namespaces, CRD installs, hub
// subprocesses, private fault apiservers and fault proxies. Neither tests/ nor bench/ imports the other; both import this.
export * from "./local_clusters.ts";
export * from "./kubectl.ts";
export * from "./namespace.ts";
export * from "./crds.ts";
export { DEFAULT_CLUSTER_NAMES, KUBECONFIG_PATH } from "../clusters/clusters.ts";
export { KUBE_VERSION } from "../build/build.ts";
// Private apiservers on the shared etcd, and the network-level fault proxy (tests/faults/, tests/soak.ts, the bench).
export * from "./fault_cluster.ts";
export * from "./free_port.ts";
export * from "./kubeconfig_text.ts";
export * from "./fault_proxy.ts";
export * from "./cluster_api.ts";

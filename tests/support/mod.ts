// Public surface of tests/support: helpers for end-to-end tests against the real local clusters.
export * from "./local_clusters.ts";
export * from "./kubectl.ts";
export * from "./namespace.ts";
export * from "./crds.ts";
export { DEFAULT_CLUSTER_NAMES, KUBECONFIG_PATH } from "../kube/clusters.ts";
export { KUBE_VERSION } from "../kube/build.ts";
// Fault injection (tests/faults/, tests/soak.ts): private apiservers, network and request-level fault proxies.
export * from "./fault_cluster.ts";
export * from "./fault_proxy.ts";
export * from "./intercept_proxy.ts";
export * from "./cluster_api.ts";
export * from "./fault_harness.ts";

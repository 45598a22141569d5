// Public surface of tests/support: helpers for end-to-end tests against the real local clusters.
export * from "./local_clusters.ts";
export * from "./kubectl.ts";
export * from "./namespace.ts";
export * from "./crds.ts";
export { DEFAULT_CLUSTER_NAMES, KUBECONFIG_PATH } from "../kube/clusters.ts";
export { KUBE_VERSION } from "../kube/build.ts";

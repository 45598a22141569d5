// Test access to the running local clusters: presence check, admin credentials and raw HTTPS. Faults are never
// injected into these shared clusters (tests run in parallel on them): fault tests get apiservers of their own
// (fault_cluster.ts).
//
// Guarantees: every function fails loudly (ClustersNotRunningError) when the clusters are not up; nothing here ever
// starts the whole set of clusters or skips a test.

import {
  apiserverAlive,
  type ApiserverRecord,
  apiserverRequest,
  type ApiserverResponse,
  clusterRecord,
  type ClustersState,
  etcdAlive,
  KUBECONFIG_PATH,
  STATE_FILE,
} from "../clusters/clusters.ts";

/** The message every test sees when the clusters are missing. */
export const CLUSTERS_NOT_RUNNING = "local clusters are not running: start them with `deno task clusters:up`";

/** The local clusters are not running (or only partly). */
export class ClustersNotRunningError extends Error {
  constructor(detail: string, options?: ErrorOptions) {
    super(`${CLUSTERS_NOT_RUNNING} (${detail})`, options);
    this.name = "ClustersNotRunningError";
  }
}

/** An admin request to a local apiserver answered with an unexpected status. */
export class ApiserverRequestError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "ApiserverRequestError";
  }
}

/** The running local clusters as a test sees them. */
export interface LocalClusters {
  /** Cluster (and context) names, in kubeconfig order: prod, staging, dev by default. */
  names: string[];
  /** Absolute path of clusters/local.yaml. */
  kubeconfig: string;
}

/** Where {@linkcode requireClusters} looks (tests of the check itself point these elsewhere). */
export interface RequireClustersOptions {
  stateFile?: string;
  kubeconfig?: string;
}

function loadState(stateFile: string = STATE_FILE): ClustersState {
  let text: string;
  try {
    text = Deno.readTextFileSync(stateFile);
  } catch (cause) {
    throw new ClustersNotRunningError(`no state file at ${stateFile}`, { cause });
  }
  try {
    return JSON.parse(text) as ClustersState;
  } catch (cause) {
    throw new ClustersNotRunningError(`the state file ${stateFile} is not valid JSON`, { cause });
  }
}

function record(name: string): ApiserverRecord {
  const state = loadState();
  return clusterRecord(state, name);
}

/**
 * Returns the running clusters, or throws ClustersNotRunningError when the state file or kubeconfig is missing, or
 * when etcd or any apiserver process is dead. Call it at the top of every test that needs clusters.
 */
export function requireClusters(options: RequireClustersOptions = {}): LocalClusters {
  const state = loadState(options.stateFile);
  const kubeconfig = options.kubeconfig ?? KUBECONFIG_PATH;
  try {
    Deno.statSync(kubeconfig);
  } catch (cause) {
    throw new ClustersNotRunningError(`no kubeconfig at ${kubeconfig}`, { cause });
  }
  if (!etcdAlive(state.etcd)) throw new ClustersNotRunningError(`etcd (pid ${state.etcd.pid}) is not running`);
  const dead = state.clusters.filter((c) => !apiserverAlive(c));
  if (dead.length > 0) {
    const list = dead.map((c) => `${c.name} (pid ${c.pid ?? "none"}, port ${c.port})`).join(", ");
    throw new ClustersNotRunningError(`kube-apiserver not running for ${list}`);
  }
  if (state.clusters.length === 0) throw new ClustersNotRunningError("the state lists no clusters");
  return { names: state.clusters.map((c) => c.name), kubeconfig };
}

/** The admin bearer token of cluster `name` (group system:masters). Never log it. */
export function adminToken(name: string): string {
  return record(name).token;
}

/** The apiserver base URL of cluster `name`, e.g. https://127.0.0.1:16443. */
export function apiserverUrl(name: string): string {
  return record(name).url;
}

/** PEM of the certificate(s) to trust for cluster `name` (the apiserver's generated serving certificate and CA). */
export function apiserverCa(name: string): string {
  return Deno.readTextFileSync(record(name).caFile);
}

/** Sends one admin HTTPS request to cluster `name`; resolves with status and body text (nothing left open). */
export function apiserverGet(
  name: string,
  path: string,
  options: { timeoutMs?: number } = {},
): Promise<ApiserverResponse> {
  return apiserverRequest(record(name), path, options);
}

/** The Prometheus text of cluster `name`'s /metrics. */
export async function apiserverMetrics(name: string): Promise<string> {
  const response = await apiserverGet(name, "/metrics", { timeoutMs: 30_000 });
  if (response.status !== 200) {
    throw new ApiserverRequestError(
      `GET /metrics on cluster "${name}" answered ${response.status}: ${response.body.slice(0, 300)}`,
    );
  }
  return response.body;
}

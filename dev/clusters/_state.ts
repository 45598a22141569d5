// The state file .cache/clusters/state.json: its records, reading and writing it, and the lock around changes.

import { REPO_ROOT } from "../build/build.ts";
import { type ControllerManagerRecord, newControllerManagerRecord } from "./_controller_manager.ts";
import { ClusterSetupError } from "./_cluster_setup_error.ts";
import { LOCK_FILE, STATE_FILE } from "./_layout.ts";

/** One kube-apiserver as recorded in the state file. */
export interface ApiserverRecord {
  name: string;
  port: number;
  /** https://127.0.0.1:<port> */
  url: string;
  pid: number | null;
  /** Admin bearer token (user admin, group system:masters). */
  token: string;
  etcdPrefix: string;
  dir: string;
  certDir: string;
  /** The apiserver's self-generated serving certificate bundle, used as the CA. */
  caFile: string;
  tokenFile: string;
  logFile: string;
}

/** The shared etcd as recorded in the state file. */
export interface EtcdRecord {
  pid: number | null;
  clientUrl: string;
  clientPort: number;
  peerPort: number;
  dataDir: string;
  logFile: string;
}

/** Contents of .cache/clusters/state.json. */
export interface ClustersState {
  version: 1;
  kubeVersion: string;
  etcd: EtcdRecord;
  clusters: ApiserverRecord[];
  /** One per cluster, by cluster name (absent in state files written before controller managers existed). */
  controllerManagers: ControllerManagerRecord[];
}

/** What ensuring one process did: reused a healthy one, started a new one or restarted a recorded one. */
export type Outcome = "reused" | "started" | "restarted";

/** Reads the state file, or null when the clusters were never started (or were taken down). */
export function readStateSync(): ClustersState | null {
  let text: string;
  try {
    text = Deno.readTextFileSync(STATE_FILE);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return null;
    throw new ClusterSetupError(`could not read the cluster state file ${STATE_FILE}`, { cause: error });
  }
  try {
    const state = JSON.parse(text) as ClustersState;
    state.controllerManagers ??= [];
    return state;
  } catch (cause) {
    throw new ClusterSetupError(
      `the cluster state file ${STATE_FILE} is not valid JSON: run \`deno task clusters:down\` then \`deno task clusters:up\``,
      { cause },
    );
  }
}

/** Async form of {@linkcode readStateSync}. */
export function readState(): Promise<ClustersState | null> {
  return Promise.resolve(readStateSync());
}

/** Writes `text` to `path` (mode 0600) through a temporary file and a rename, so readers never see half of it. */
export async function writeFileAtomic(path: string, text: string): Promise<void> {
  const tmp = `${path}.tmp-${Deno.pid}-${crypto.randomUUID()}`;
  await Deno.writeTextFile(tmp, text, { mode: 0o600 });
  await Deno.chmod(tmp, 0o600);
  await Deno.rename(tmp, path);
}

/** Replaces the state file with `state`. */
export function writeState(state: ClustersState): Promise<void> {
  return writeFileAtomic(STATE_FILE, JSON.stringify(state, null, 2) + "\n");
}

/** The controller-manager record of cluster `name` (created in `state` when missing; nothing is started). */
export function controllerManagerRecord(state: ClustersState, name: string): ControllerManagerRecord {
  let record = state.controllerManagers.find((c) => c.cluster === name);
  if (!record) {
    record = newControllerManagerRecord(clusterRecord(state, name));
    state.controllerManagers.push(record);
  }
  return record;
}

/** The record of cluster `name`, or a ClusterSetupError naming the known clusters. */
export function clusterRecord(state: ClustersState, name: string): ApiserverRecord {
  const record = state.clusters.find((c) => c.name === name);
  if (!record) {
    const known = state.clusters.map((c) => c.name).join(", ") || "(none)";
    throw new ClusterSetupError(`unknown local cluster "${name}": the running clusters are ${known}`);
  }
  return record;
}

/** Runs `fn` holding the exclusive lock (.cache/clusters.lock). */
export async function withLock<T>(fn: () => Promise<T>): Promise<T> {
  await Deno.mkdir(`${REPO_ROOT}/.cache`, { recursive: true });
  using file = await Deno.open(LOCK_FILE, { create: true, write: true });
  await file.lock(true);
  try {
    return await fn();
  } finally {
    await file.unlock();
  }
}

/** The state, or a ClusterSetupError telling to run `deno task clusters:up`. */
export function requireState(): ClustersState {
  const state = readStateSync();
  if (!state) {
    throw new ClusterSetupError("local clusters are not running: start them with `deno task clusters:up`");
  }
  return state;
}

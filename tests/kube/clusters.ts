// Starts, reuses, stops and reports the local test clusters: one shared etcd, and per cluster a real kube-apiserver
// with a real kube-controller-manager beside it.
//
// CLI: `deno run --allow-all tests/kube/clusters.ts up [--names prod,staging,dev] | down | status`.
//
// Layout (all on 127.0.0.1):
// - etcd: client 12379, peer 12380 (every port plus OPERATOR_HUB_PORT_OFFSET when set), data on tmpfs (/dev/shm/operator-hub-etcd), log .cache/clusters/etcd.log.
// - apiservers: prod 16443, staging 16444, dev 16445, any other name the next free port from 16446; each stores its
//   objects under the etcd prefix `/registry-<name>` and keeps token file, serving certs and log in
//   .cache/clusters/<name>/.
// - controller managers: on the apiserver's port + 1000 (prod 17443, staging 17444, dev 17445), kubeconfig, serving
//   certs and log in .cache/clusters/<name>/controller-manager/; their client certificate (user
//   system:kube-controller-manager) and the client CA every apiserver trusts are in .cache/clusters/pki/. Which
//   controllers run, and why the others do not: tests/kube/_controller_manager.ts.
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
// - `up`, `down`, `startApiserver` and `stopApiserver` serialise on an exclusive lock (.cache/clusters.lock).

import { ensureBinaries, KUBE_BIN_DIR, KUBE_VERSION, REPO_ROOT } from "./build.ts";
import {
  findProcessesByExe,
  isOurProcess,
  logTail,
  procArgs,
  ProcessError,
  spawnDetached,
  stopPid,
  waitPortFree,
} from "./_process.ts";
import {
  type ClientPki,
  CONTROLLER_MANAGER_BINARY,
  controllerManagerAlive,
  controllerManagerArgs,
  ControllerManagerError,
  controllerManagerHealthy,
  type ControllerManagerRecord,
  ensureClientPki,
  newControllerManagerRecord,
  probeNamespaceDeletion,
  spawnControllerManager,
} from "./_controller_manager.ts";

export { type ControllerManagerRecord, DISABLED_CONTROLLERS } from "./_controller_manager.ts";

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
export const SERVICE_ACCOUNT_ISSUER = "https://kubernetes.default.svc.cluster.local";

const LOCK_FILE = `${REPO_ROOT}/.cache/clusters.lock`;
const STAGING_KUBECONFIG = `${STATE_DIR}/kubeconfig.yaml`;
const SERVICE_ACCOUNT_KEY = `${STATE_DIR}/service-account.key`;
/** The client CA every local apiserver trusts, and the controller managers' client certificate signed by it. */
export const CLIENT_PKI: ClientPki = {
  caCert: `${STATE_DIR}/pki/client-ca.crt`,
  caKey: `${STATE_DIR}/pki/client-ca.key`,
  cert: `${STATE_DIR}/pki/kube-controller-manager.crt`,
  key: `${STATE_DIR}/pki/kube-controller-manager.key`,
};
/** A controller manager is healthy when a namespace it is asked to delete is gone within this time. */
export const NAMESPACE_DELETION_HEALTHY_MS = 10_000;
const APISERVER_BINARY = `${KUBE_BIN_DIR}/kube-apiserver`;
const ETCD_BINARY = `${KUBE_BIN_DIR}/etcd`;
const NAME_PATTERN = /^[a-z]([-a-z0-9]{0,30}[a-z0-9])?$/;
const DEFAULT_READY_TIMEOUT_MS = 120_000;

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

/** A cluster could not be started, reached or stopped. */
export class ClusterSetupError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "ClusterSetupError";
  }
}

/** What `up` did. */
export interface UpReport {
  names: string[];
  kubeconfig: string;
  buildCached: boolean;
  buildSeconds: number;
  /** Seconds from the end of the build until every cluster was ready with its CRDs Established. */
  readySeconds: number;
  etcd: "reused" | "started" | "restarted";
  started: string[];
  restarted: string[];
  reused: string[];
  /** What happened to each cluster's controller manager. */
  controllerManagers: { started: string[]; restarted: string[]; reused: string[] };
  /** Per cluster, seconds from deleting the readiness probe's namespace until it was gone. */
  namespaceDeletionSeconds: Record<string, number>;
}

/** What `down` stopped. */
export interface DownReport {
  stopped: number;
}

/** Health of one cluster, as `status` reports it. */
export interface ClusterStatus {
  name: string;
  url: string;
  pid: number | null;
  alive: boolean;
  ready: boolean;
  controllerManager: { pid: number | null; alive: boolean; healthy: boolean } | null;
}

/** Health of everything, as `status` reports it. */
export interface ClustersStatus {
  etcd: { pid: number | null; alive: boolean; healthy: boolean } | null;
  clusters: ClusterStatus[];
}

/** Options shared by the long-running operations. */
export interface LogOptions {
  /** Receives progress lines (no credentials); defaults to console.log. */
  log?: (line: string) => void;
}

// ---------------------------------------------------------------------------------------------------------------
// State

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

async function writeFileAtomic(path: string, text: string): Promise<void> {
  const tmp = `${path}.tmp-${Deno.pid}-${crypto.randomUUID()}`;
  await Deno.writeTextFile(tmp, text, { mode: 0o600 });
  await Deno.chmod(tmp, 0o600);
  await Deno.rename(tmp, path);
}

function writeState(state: ClustersState): Promise<void> {
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

async function withLock<T>(fn: () => Promise<T>): Promise<T> {
  await Deno.mkdir(`${REPO_ROOT}/.cache`, { recursive: true });
  using file = await Deno.open(LOCK_FILE, { create: true, write: true });
  await file.lock(true);
  try {
    return await fn();
  } finally {
    await file.unlock();
  }
}

function randomToken(): string {
  return Array.from(crypto.getRandomValues(new Uint8Array(32)), (b) => b.toString(16).padStart(2, "0")).join("");
}

function newEtcdRecord(): EtcdRecord {
  return {
    pid: null,
    clientUrl: `http://127.0.0.1:${ETCD_CLIENT_PORT}`,
    clientPort: ETCD_CLIENT_PORT,
    peerPort: ETCD_PEER_PORT,
    dataDir: etcdDataDir(),
    logFile: `${STATE_DIR}/etcd.log`,
  };
}

function assignPort(state: ClustersState, name: string): number {
  const index = DEFAULT_CLUSTER_NAMES.indexOf(name);
  if (index >= 0) return FIRST_APISERVER_PORT + index;
  const used = new Set(state.clusters.map((c) => c.port));
  let port = FIRST_APISERVER_PORT + DEFAULT_CLUSTER_NAMES.length;
  while (used.has(port)) port++;
  return port;
}

function newApiserverRecord(state: ClustersState, name: string): ApiserverRecord {
  const port = assignPort(state, name);
  const dir = `${STATE_DIR}/${name}`;
  return {
    name,
    port,
    url: `https://127.0.0.1:${port}`,
    pid: null,
    token: randomToken(),
    etcdPrefix: `/registry-${name}`,
    dir,
    certDir: `${dir}/certs`,
    caFile: `${dir}/certs/apiserver.crt`,
    tokenFile: `${dir}/tokens.csv`,
    logFile: `${dir}/apiserver.log`,
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Probes

function apiserverMarker(record: ApiserverRecord): string {
  return `--secure-port=${record.port}`;
}

function etcdMarker(etcd: EtcdRecord): string {
  return `--listen-client-url=${etcd.clientUrl}`;
}

/** True when the running process still executes the binary file it was started from (not a since-rebuilt one). */
function runsCurrentBinary(pid: number): boolean {
  try {
    return !Deno.readLinkSync(`/proc/${pid}/exe`).endsWith(" (deleted)");
  } catch {
    return false;
  }
}

/** True when the running process was started with exactly `args` (so a changed flag set forces a restart). */
function runsWithArgs(pid: number, args: string[]): boolean {
  const running = procArgs(pid);
  return running !== null && JSON.stringify(running.slice(1)) === JSON.stringify(args);
}

/** The apiserver process of `record` is alive (whatever its health). */
export function apiserverAlive(record: ApiserverRecord): boolean {
  return isOurProcess(record.pid, APISERVER_BINARY, apiserverMarker(record));
}

/** The shared etcd process is alive (whatever its health). */
export function etcdAlive(etcd: EtcdRecord): boolean {
  return isOurProcess(etcd.pid, ETCD_BINARY, etcdMarker(etcd));
}

/** Response of {@linkcode apiserverRequest}: status and the whole body as text. */
export interface ApiserverResponse {
  status: number;
  body: string;
}

/**
 * Sends one HTTPS request to the apiserver as the admin, trusting only its generated serving certificate.
 *
 * The body is read completely and the HTTP client closed before this resolves (no leaked resources).
 */
export async function apiserverRequest(
  record: ApiserverRecord,
  path: string,
  init: { method?: string; body?: string; contentType?: string; timeoutMs?: number } = {},
): Promise<ApiserverResponse> {
  const ca = await Deno.readTextFile(record.caFile);
  const client = Deno.createHttpClient({ caCerts: [ca] });
  try {
    const headers: Record<string, string> = { authorization: `Bearer ${record.token}`, accept: "*/*" };
    if (init.contentType) headers["content-type"] = init.contentType;
    const response = await fetch(`${record.url}${path}`, {
      method: init.method ?? "GET",
      body: init.body,
      headers,
      client,
      signal: AbortSignal.timeout(init.timeoutMs ?? 10_000),
    });
    return { status: response.status, body: await response.text() };
  } finally {
    client.close();
  }
}

/** True when /readyz answers 200 within `timeoutMs`. */
export async function apiserverReady(record: ApiserverRecord, timeoutMs = 2_000): Promise<boolean> {
  try {
    return (await apiserverRequest(record, "/readyz", { timeoutMs })).status === 200;
  } catch {
    return false;
  }
}

async function etcdHealthy(etcd: EtcdRecord): Promise<boolean> {
  try {
    const response = await fetch(`${etcd.clientUrl}/health`, { signal: AbortSignal.timeout(2_000) });
    const body = await response.json() as { health?: string };
    return response.ok && body.health === "true";
  } catch {
    return false;
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function waitApiserverReady(record: ApiserverRecord, timeoutMs: number): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (true) {
    if (!apiserverAlive(record)) {
      throw new ClusterSetupError(
        `kube-apiserver of cluster "${record.name}" (pid ${record.pid}, port ${record.port}) exited during startup; ` +
          `last lines of ${record.logFile}:\n${await logTail(record.logFile)}`,
      );
    }
    if (await apiserverReady(record)) return;
    if (performance.now() > deadline) {
      throw new ClusterSetupError(
        `kube-apiserver of cluster "${record.name}" (pid ${record.pid}) did not answer /readyz with 200 on ` +
          `${record.url} within ${timeoutMs / 1000}s; last lines of ${record.logFile}:\n${await logTail(
            record.logFile,
          )}`,
      );
    }
    await sleep(100);
  }
}

async function waitEtcdHealthy(etcd: EtcdRecord, timeoutMs: number): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!(await etcdHealthy(etcd))) {
    if (!etcdAlive(etcd)) {
      throw new ClusterSetupError(
        `etcd (pid ${etcd.pid}) exited during startup; last lines of ${etcd.logFile}:\n${await logTail(etcd.logFile)}`,
      );
    }
    if (performance.now() > deadline) {
      throw new ClusterSetupError(
        `etcd (pid ${etcd.pid}) did not report healthy on ${etcd.clientUrl}/health within ${timeoutMs / 1000}s`,
      );
    }
    await sleep(50);
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Processes

/** The full kube-apiserver command line (envtest-style flags) for `record`. */
export function apiserverArgs(record: ApiserverRecord, etcd: EtcdRecord): string[] {
  return [
    "--advertise-address=127.0.0.1",
    "--bind-address=127.0.0.1",
    `--secure-port=${record.port}`,
    `--cert-dir=${record.certDir}`,
    `--etcd-servers=${etcd.clientUrl}`,
    `--etcd-prefix=${record.etcdPrefix}`,
    "--service-cluster-ip-range=10.0.0.0/24",
    "--allow-privileged=true",
    "--authorization-mode=RBAC",
    `--token-auth-file=${record.tokenFile}`,
    `--client-ca-file=${CLIENT_PKI.caCert}`,
    `--service-account-issuer=${SERVICE_ACCOUNT_ISSUER}`,
    `--service-account-key-file=${SERVICE_ACCOUNT_KEY}`,
    `--service-account-signing-key-file=${SERVICE_ACCOUNT_KEY}`,
    "--enable-priority-and-fairness=false",
    "--endpoint-reconciler-type=none",
  ];
}

/** Writes an RSA-2048 PKCS#8 key for signing and verifying service-account tokens, unless one exists. */
async function ensureServiceAccountKey(): Promise<void> {
  try {
    await Deno.stat(SERVICE_ACCOUNT_KEY);
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
  await writeFileAtomic(SERVICE_ACCOUNT_KEY, `-----BEGIN PRIVATE KEY-----\n${base64}\n-----END PRIVATE KEY-----\n`);
}

async function spawnApiserver(record: ApiserverRecord, etcd: EtcdRecord): Promise<void> {
  await waitPortFree(record.port, `kube-apiserver of cluster "${record.name}"`);
  await Deno.mkdir(record.certDir, { recursive: true });
  await writeFileAtomic(record.tokenFile, `${record.token},admin,admin,"system:masters"\n`);
  await Deno.writeTextFile(record.logFile, `--- started ${new Date().toISOString()}\n`, { append: true });
  record.pid = await spawnDetached(APISERVER_BINARY, apiserverArgs(record, etcd), record.logFile);
}

async function spawnEtcd(etcd: EtcdRecord): Promise<void> {
  await waitPortFree(etcd.clientPort, "etcd (client port)");
  await waitPortFree(etcd.peerPort, "etcd (peer port)");
  await Deno.mkdir(etcd.dataDir, { recursive: true });
  await Deno.writeTextFile(etcd.logFile, `--- started ${new Date().toISOString()}\n`, { append: true });
  etcd.pid = await spawnDetached(ETCD_BINARY, [
    `--data-dir=${etcd.dataDir}`,
    `--listen-client-url=${etcd.clientUrl}`,
    `--listen-peer-url=http://127.0.0.1:${etcd.peerPort}`,
  ], etcd.logFile);
}

/** Makes etcd healthy; says whether it was reused, started (fresh state) or restarted. */
async function ensureEtcd(state: ClustersState, fresh: boolean): Promise<UpReport["etcd"]> {
  const etcd = state.etcd;
  if (etcdAlive(etcd)) {
    if (runsCurrentBinary(etcd.pid!) && await etcdHealthy(etcd)) return "reused";
    await stopPid(etcd.pid!);
  }
  await spawnEtcd(etcd);
  await writeState(state);
  await waitEtcdHealthy(etcd, 30_000);
  return fresh ? "started" : "restarted";
}

type ApiserverOutcome = "reused" | "started" | "restarted";

async function ensureApiserver(
  state: ClustersState,
  record: ApiserverRecord,
  isNew: boolean,
): Promise<ApiserverOutcome> {
  if (apiserverAlive(record)) {
    if (runsCurrentBinary(record.pid!) && runsWithArgs(record.pid!, apiserverArgs(record, state.etcd))) {
      if (await apiserverReady(record)) return "reused";
      // Alive but not ready: it may still be starting (or reconnecting to a restarted etcd). Give it a moment.
      try {
        await waitApiserverReady(record, 30_000);
        return "reused";
      } catch {
        // Wedged: restart below.
      }
    }
    await stopPid(record.pid!);
  }
  await spawnApiserver(record, state.etcd);
  await writeState(state);
  await waitApiserverReady(record, DEFAULT_READY_TIMEOUT_MS);
  return isNew ? "started" : "restarted";
}

/** What happened to one controller manager in `up`, and how long its namespace probe took. */
interface ControllerManagerOutcome {
  outcome: ApiserverOutcome;
  namespaceDeletionSeconds: number;
}

/**
 * Makes the controller manager of `apiserver` work: a running one with the current binary and flags is reused if it
 * deletes a namespace within the ready timeout; anything else is (re)started and must then delete one within the
 * ready timeout (its informers sync first). How long the deletion took is returned, for the 10 s health line.
 */
async function ensureControllerManager(
  state: ClustersState,
  apiserver: ApiserverRecord,
): Promise<ControllerManagerOutcome> {
  const record = controllerManagerRecord(state, apiserver.name);
  const request = (path: string, init?: { method?: string; body?: string; contentType?: string }) =>
    apiserverRequest(apiserver, path, init);
  const args = controllerManagerArgs(record, apiserver, CLIENT_PKI, SERVICE_ACCOUNT_KEY);
  const isNew = record.pid === null;
  if (controllerManagerAlive(record)) {
    if (runsCurrentBinary(record.pid!) && runsWithArgs(record.pid!, args)) {
      try {
        const seconds = await probeNamespaceDeletion(record, request, DEFAULT_READY_TIMEOUT_MS);
        return { outcome: "reused", namespaceDeletionSeconds: seconds };
      } catch (error) {
        if (!(error instanceof ControllerManagerError)) throw error;
        // Wedged (or exited meanwhile): restart below.
      }
    }
    if (controllerManagerAlive(record)) await stopPid(record.pid!);
  }
  await spawnControllerManager(record, apiserver, CLIENT_PKI, SERVICE_ACCOUNT_KEY);
  await writeState(state);
  const seconds = await probeNamespaceDeletion(record, request, DEFAULT_READY_TIMEOUT_MS);
  return { outcome: isNew ? "started" : "restarted", namespaceDeletionSeconds: seconds };
}

// ---------------------------------------------------------------------------------------------------------------
// kubectl and kubeconfig

/** The kubeconfig YAML for `clusters` (token auth, the serving certificate as CA), current context `current`. */
export async function kubeconfigYaml(clusters: ApiserverRecord[], current: string): Promise<string> {
  const q = (s: string) => JSON.stringify(s);
  const lines = [
    "# Generated by tests/kube/clusters.ts (`deno task clusters:up`): local test clusters. Do not commit.",
    "apiVersion: v1",
    "kind: Config",
    "clusters:",
  ];
  for (const c of clusters) {
    const ca = btoa(await Deno.readTextFile(c.caFile));
    lines.push(`  - name: ${q(c.name)}`, "    cluster:", `      server: ${q(c.url)}`);
    lines.push(`      certificate-authority-data: ${q(ca)}`);
  }
  lines.push("users:");
  for (const c of clusters) lines.push(`  - name: ${q(c.name)}`, "    user:", `      token: ${q(c.token)}`);
  lines.push("contexts:");
  for (const c of clusters) {
    lines.push(`  - name: ${q(c.name)}`, "    context:", `      cluster: ${q(c.name)}`, `      user: ${q(c.name)}`);
  }
  lines.push(`current-context: ${q(current)}`, "preferences: {}", "");
  return lines.join("\n");
}

async function kubectl(kubeconfig: string, context: string, args: string[]): Promise<string> {
  const out = await new Deno.Command("kubectl", {
    args: [`--kubeconfig=${kubeconfig}`, `--context=${context}`, ...args],
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output().catch((cause) => {
    throw new ClusterSetupError("could not run kubectl: is it installed and on PATH?", { cause });
  });
  if (!out.success) {
    throw new ClusterSetupError(
      `kubectl --context ${context} ${args.join(" ")} exited with code ${out.code}: ${
        new TextDecoder().decode(out.stderr).trim()
      }`,
    );
  }
  return new TextDecoder().decode(out.stdout);
}

/** The CRD manifests in crds/ (sorted paths of *.yaml, *.yml and *.json). */
export async function crdFiles(): Promise<string[]> {
  const files: string[] = [];
  try {
    for await (const entry of Deno.readDir(CRDS_DIR)) {
      if (entry.isFile && /\.(ya?ml|json)$/.test(entry.name)) files.push(`${CRDS_DIR}/${entry.name}`);
    }
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
  return files.sort();
}

/** Server-side applies `files` (as {@linkcode CRD_FIELD_MANAGER}) and waits until every CRD is Established. */
export async function applyCrds(kubeconfig: string, context: string, files: string[]): Promise<void> {
  if (files.length === 0) return;
  const fileArgs = files.flatMap((f) => ["-f", f]);
  await kubectl(kubeconfig, context, [
    "apply",
    "--server-side",
    "--force-conflicts",
    `--field-manager=${CRD_FIELD_MANAGER}`,
    ...fileArgs,
  ]);
  // `kubectl wait` fails at once, instead of waiting, while a just-created CRD has no status.conditions yet
  // (".status.conditions accessor error: <nil>"): ask again a few times before giving up.
  for (let attempt = 1;; attempt++) {
    try {
      await kubectl(kubeconfig, context, ["wait", "--for=condition=Established", "--timeout=60s", ...fileArgs]);
      return;
    } catch (error) {
      if (attempt >= 10 || !/accessor error/.test((error as Error).message)) throw error;
      await sleep(200);
    }
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Commands

/** Options of {@linkcode clustersUp}. */
export interface UpOptions extends LogOptions {
  /** Clusters to ensure (default prod, staging, dev). Clusters already in the state are kept running too. */
  names?: string[];
}

/** Cleans up processes and data left by a run whose state file is gone. */
async function removeOrphans(log: (line: string) => void): Promise<number> {
  const orphans = findProcessesByExe([CONTROLLER_MANAGER_BINARY, APISERVER_BINARY, ETCD_BINARY]);
  if (orphans.length > 0) log(`stopping ${orphans.length} orphaned control-plane process(es): ${orphans.join(", ")}`);
  await Promise.all(orphans.map((pid) => stopPid(pid, { graceMs: 5_000 })));
  return orphans.length;
}

/** Starts (or reuses) etcd and every cluster, installs crds/, writes clusters/local.yaml. */
export async function clustersUp(options: UpOptions = {}): Promise<UpReport> {
  const log = options.log ?? ((line: string) => console.log(line));
  const requested = options.names ?? [...DEFAULT_CLUSTER_NAMES];
  if (requested.length === 0) throw new ClusterSetupError("no cluster names given: pass e.g. --names prod,staging");
  for (const name of requested) {
    if (!NAME_PATTERN.test(name)) {
      throw new ClusterSetupError(
        `invalid cluster name "${name}": use 1-32 lowercase letters, digits and '-', starting with a letter`,
      );
    }
  }
  return await withLock(async () => {
    const bins = await ensureBinaries();
    log(
      bins.cached
        ? `kube binaries ${KUBE_VERSION}: cached`
        : `kube binaries ${KUBE_VERSION}: built in ${bins.buildSeconds.toFixed(1)}s`,
    );
    const started = performance.now();
    await Deno.mkdir(STATE_DIR, { recursive: true, mode: 0o700 });
    let state = readStateSync();
    const fresh = state === null;
    if (state === null) {
      await removeOrphans(log);
      const etcd = newEtcdRecord();
      await Deno.remove(etcd.dataDir, { recursive: true }).catch(() => {});
      state = { version: 1, kubeVersion: KUBE_VERSION, etcd, clusters: [], controllerManagers: [] };
    }
    const phases: string[] = [];
    let phaseStart = performance.now();
    const phase = (label: string) => {
      const now = performance.now();
      phases.push(`${label} ${((now - phaseStart) / 1000).toFixed(1)}s`);
      phaseStart = now;
    };
    const etcdOutcome = await ensureEtcd(state, fresh);
    phase("etcd");
    log(`etcd ${etcdOutcome} on ${state.etcd.clientUrl} (data ${state.etcd.dataDir})`);
    await ensureServiceAccountKey();
    await ensureClientPki(CLIENT_PKI);

    const isNew = new Set<string>();
    for (const name of requested) {
      if (!state.clusters.some((c) => c.name === name)) {
        state.clusters.push(newApiserverRecord(state, name));
        isNew.add(name);
      }
    }
    const order = [...requested, ...state.clusters.map((c) => c.name).filter((n) => !requested.includes(n))];
    const records = order.map((name) => clusterRecord(state, name));
    await writeState(state);

    const outcomes = await Promise.all(records.map((r) => ensureApiserver(state, r, isNew.has(r.name))));
    await writeState(state);
    phase("apiservers");

    await writeFileAtomic(STAGING_KUBECONFIG, await kubeconfigYaml(records, order[0]));
    const files = await crdFiles();
    // The CRDs and the controller managers do not depend on each other: both run at once.
    const [managers] = await Promise.all([
      Promise.all(records.map((r) => ensureControllerManager(state, r))),
      Promise.all(records.map((r) => applyCrds(STAGING_KUBECONFIG, r.name, files))),
    ]);
    await writeState(state);
    await Deno.mkdir(`${REPO_ROOT}/clusters`, { recursive: true });
    await writeFileAtomic(KUBECONFIG_PATH, await kubeconfigYaml(records, order[0]));
    phase("CRDs and controller managers");
    const readySeconds = (performance.now() - started) / 1000;

    const report: UpReport = {
      names: order,
      kubeconfig: KUBECONFIG_PATH,
      buildCached: bins.cached,
      buildSeconds: bins.buildSeconds,
      readySeconds,
      etcd: etcdOutcome,
      started: [],
      restarted: [],
      reused: [],
      controllerManagers: { started: [], restarted: [], reused: [] },
      namespaceDeletionSeconds: {},
    };
    const slow: string[] = [];
    records.forEach((r, i) => {
      const manager = controllerManagerRecord(state, r.name);
      // A (re)started one first syncs its caches; the 10 s health limit is for one already running.
      const { outcome, namespaceDeletionSeconds } = managers[i];
      if (outcome === "reused" && namespaceDeletionSeconds * 1000 > NAMESPACE_DELETION_HEALTHY_MS) slow.push(r.name);
      report[outcomes[i]].push(r.name);
      report.controllerManagers[managers[i].outcome].push(r.name);
      report.namespaceDeletionSeconds[r.name] = managers[i].namespaceDeletionSeconds;
      log(`${r.name.padEnd(10)} ${r.url}  ${outcomes[i].padEnd(9)} pid ${r.pid}  log ${r.logFile}`);
      log(
        `${"".padEnd(10)} controller manager :${manager.port}  ${managers[i].outcome.padEnd(9)} pid ${manager.pid}  ` +
          `namespace deleted in ${managers[i].namespaceDeletionSeconds.toFixed(1)}s  log ${manager.logFile}`,
      );
    });
    log(`${files.length} CRD file(s) from crds/ applied and Established in every cluster`);
    if (slow.length > 0) {
      log(
        `warning: the controller managers of ${slow.join(", ")} took more than ` +
          `${NAMESPACE_DELETION_HEALTHY_MS / 1000}s to delete a namespace (a loaded machine?); see their logs above`,
      );
    }
    log(
      `${records.length} cluster(s) ready in ${readySeconds.toFixed(1)}s after the build (${phases.join(", ")}) ` +
        `(build ${bins.cached ? "cached" : `took ${bins.buildSeconds.toFixed(1)}s`}); ` +
        `kubeconfig clusters/local.yaml, contexts ${order.join(", ")}`,
    );
    return report;
  });
}

/** Stops every apiserver and etcd, and removes .cache/clusters, the etcd data and clusters/local.yaml. */
export function clustersDown(options: LogOptions = {}): Promise<DownReport> {
  const log = options.log ?? ((line: string) => console.log(line));
  return withLock(async () => {
    let stopped = 0;
    let state: ClustersState | null = null;
    try {
      state = readStateSync();
    } catch (error) {
      log(`ignoring unreadable state: ${(error as Error).message}`);
    }
    if (state) {
      // Controller managers first, so that they do not log the apiservers' disappearance.
      const managers = state.controllerManagers.filter(controllerManagerAlive);
      await Promise.all(managers.map((r) => stopPid(r.pid!, { graceMs: 10_000 })));
      for (const r of managers) log(`${r.cluster}: kube-controller-manager pid ${r.pid} stopped`);
      stopped += managers.length;
      const live = state.clusters.filter(apiserverAlive);
      await Promise.all(live.map((r) => stopPid(r.pid!, { graceMs: 10_000 })));
      for (const r of live) log(`${r.name}: kube-apiserver pid ${r.pid} stopped`);
      stopped += live.length;
      if (etcdAlive(state.etcd)) {
        await stopPid(state.etcd.pid!, { graceMs: 10_000 });
        log(`etcd pid ${state.etcd.pid} stopped`);
        stopped++;
      }
    }
    stopped += await removeOrphans(log);
    await Deno.remove(STATE_DIR, { recursive: true }).catch(() => {});
    await Deno.remove(state?.etcd.dataDir ?? etcdDataDir(), { recursive: true }).catch(() => {});
    await Deno.remove(KUBECONFIG_PATH).catch(() => {});
    log(`local clusters down (${stopped} process(es) stopped, state removed)`);
    return { stopped };
  });
}

/** Liveness and readiness of etcd and every recorded cluster. */
export async function clustersStatus(): Promise<ClustersStatus> {
  const state = readStateSync();
  if (!state) return { etcd: null, clusters: [] };
  const clusters = await Promise.all(state.clusters.map(async (r) => {
    const alive = apiserverAlive(r);
    const manager = state.controllerManagers.find((c) => c.cluster === r.name);
    const managerAlive = manager !== undefined && controllerManagerAlive(manager);
    return {
      name: r.name,
      url: r.url,
      pid: r.pid,
      alive,
      ready: alive && await apiserverReady(r),
      controllerManager: manager
        ? { pid: manager.pid, alive: managerAlive, healthy: managerAlive && await controllerManagerHealthy(manager) }
        : null,
    };
  }));
  const etcdIsAlive = etcdAlive(state.etcd);
  return {
    etcd: { pid: state.etcd.pid, alive: etcdIsAlive, healthy: etcdIsAlive && await etcdHealthy(state.etcd) },
    clusters,
  };
}

/** Options of {@linkcode stopApiserver}. */
export interface StopApiserverOptions {
  /** SIGTERM (graceful, default) or SIGKILL (crash). */
  signal?: "SIGTERM" | "SIGKILL";
  /** How long SIGTERM may take before SIGKILL. Default 10 s. */
  graceMs?: number;
}

/**
 * Stops the apiserver of cluster `name` (for fault tests); its port, token, certs and data stay. Its controller manager
 * keeps running and reconnects once the apiserver is back, as on a real control plane.
 */
export function stopApiserver(name: string, options: StopApiserverOptions = {}): Promise<void> {
  return withLock(async () => {
    const state = requireState();
    const record = clusterRecord(state, name);
    if (apiserverAlive(record)) await stopPid(record.pid!, options);
    record.pid = null;
    await writeState(state);
  });
}

/**
 * Starts the apiserver of cluster `name` again with the same port and flags, and waits for /readyz; then starts its
 * controller manager too if that one has died meanwhile (without waiting for its caches).
 */
export function startApiserver(name: string, options: { timeoutMs?: number } = {}): Promise<void> {
  return withLock(async () => {
    const state = requireState();
    const record = clusterRecord(state, name);
    if (!(apiserverAlive(record) && await apiserverReady(record))) {
      if (apiserverAlive(record)) await stopPid(record.pid!);
      await spawnApiserver(record, state.etcd);
      await writeState(state);
      await waitApiserverReady(record, options.timeoutMs ?? DEFAULT_READY_TIMEOUT_MS);
    }
    const manager = state.controllerManagers.find((c) => c.cluster === name);
    if (manager && !controllerManagerAlive(manager)) {
      await spawnControllerManager(manager, record, CLIENT_PKI, SERVICE_ACCOUNT_KEY);
      await writeState(state);
    }
  });
}

/** Stops the shared etcd (every apiserver loses its storage until {@linkcode startEtcd}). */
export function stopEtcd(options: StopApiserverOptions = {}): Promise<void> {
  return withLock(async () => {
    const state = requireState();
    if (etcdAlive(state.etcd)) await stopPid(state.etcd.pid!, options);
    state.etcd.pid = null;
    await writeState(state);
  });
}

/** Starts the shared etcd again on its data and waits until it is healthy. */
export function startEtcd(): Promise<void> {
  return withLock(async () => {
    const state = requireState();
    await ensureEtcd(state, false);
  });
}

function requireState(): ClustersState {
  const state = readStateSync();
  if (!state) {
    throw new ClusterSetupError("local clusters are not running: start them with `deno task clusters:up`");
  }
  return state;
}

// ---------------------------------------------------------------------------------------------------------------
// CLI

const USAGE = `usage: deno run --allow-all tests/kube/clusters.ts <command>

commands:
  up [--names prod,staging,dev]   start (or reuse) etcd, and per name a kube-apiserver and a
                                  kube-controller-manager; install crds/, write clusters/local.yaml
  down                            stop every process and remove the state
  status                          show liveness and readiness; exit code 1 unless everything is ready`;

function parseNames(args: string[]): string[] | undefined {
  let names: string[] | undefined;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    let value: string | undefined;
    if (arg === "--names") value = args[++i];
    else if (arg.startsWith("--names=")) value = arg.slice("--names=".length);
    else throw new ClusterSetupError(`unknown argument "${arg}" for up: the only flag is --names a,b,c`);
    if (value === undefined) throw new ClusterSetupError("--names needs a value, e.g. --names prod,staging");
    names = value.split(",").map((n) => n.trim()).filter((n) => n.length > 0);
  }
  return names;
}

async function main(args: string[]): Promise<number> {
  const [command, ...rest] = args;
  switch (command) {
    case "up": {
      await clustersUp({ names: parseNames(rest) });
      return 0;
    }
    case "down": {
      await clustersDown();
      return 0;
    }
    case "status": {
      const status = await clustersStatus();
      if (!status.etcd) {
        console.log("local clusters are not running (no state in .cache/clusters)");
        return 1;
      }
      const e = status.etcd;
      console.log(`etcd       pid ${e.pid ?? "-"}  ${e.alive ? (e.healthy ? "healthy" : "UNHEALTHY") : "DEAD"}`);
      for (const c of status.clusters) {
        const health = c.alive ? (c.ready ? "ready" : "NOT READY") : "DEAD";
        const m = c.controllerManager;
        const managerHealth = m ? (m.alive ? (m.healthy ? "healthy" : "UNHEALTHY") : "DEAD") : "MISSING";
        console.log(
          `${c.name.padEnd(10)} pid ${c.pid ?? "-"}  ${c.url}  ${health}; ` +
            `controller manager pid ${m?.pid ?? "-"}  ${managerHealth}`,
        );
      }
      return e.healthy && status.clusters.every((c) => c.ready && c.controllerManager?.healthy) ? 0 : 1;
    }
    case "--help":
    case "-h":
    case "help":
      console.log(USAGE);
      return 0;
    default:
      console.error(`unknown command ${JSON.stringify(command ?? "")}: expected up, down or status\n\n${USAGE}`);
      return 2;
  }
}

if (import.meta.main) {
  try {
    Deno.exit(await main(Deno.args));
  } catch (error) {
    const e = error instanceof Error ? error : new Error(String(error));
    console.error(`${e.name}: ${e.message}`);
    if (e.cause instanceof Error) console.error(`  caused by ${e.cause.name}: ${e.cause.message}`);
    Deno.exit(error instanceof ClusterSetupError || error instanceof ProcessError ? 1 : 3);
  }
}

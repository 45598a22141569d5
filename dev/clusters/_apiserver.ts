// One kube-apiserver per cluster: its record and flags, admin requests and readiness, and starting or ensuring it.

import {
  isOurProcess,
  logTail,
  runsCurrentBinary,
  runsWithArgs,
  spawnDetached,
  stopPid,
  waitPortFree,
} from "./_process.ts";
import { ClusterSetupError } from "./_cluster_setup_error.ts";
import {
  APISERVER_BINARY,
  CLIENT_PKI,
  DEFAULT_CLUSTER_NAMES,
  DEFAULT_READY_TIMEOUT_MS,
  FIRST_APISERVER_PORT,
  SERVICE_ACCOUNT_KEY,
  STATE_DIR,
} from "./_layout.ts";
import {
  type ApiserverRecord,
  type ClustersState,
  type EtcdRecord,
  type Outcome,
  writeFileAtomic,
  writeState,
} from "./_state.ts";
import { setTimeout as sleep } from "node:timers/promises";
import { apiserverFlags } from "../../src/testing/control_plane.ts";

function randomToken(): string {
  return Array.from(crypto.getRandomValues(new Uint8Array(32)), (b) => b.toString(16).padStart(2, "0")).join("");
}

function assignPort(state: ClustersState, name: string): number {
  const index = DEFAULT_CLUSTER_NAMES.indexOf(name);
  if (index >= 0) return FIRST_APISERVER_PORT + index;
  const used = new Set(state.clusters.map((c) => c.port));
  let port = FIRST_APISERVER_PORT + DEFAULT_CLUSTER_NAMES.length;
  while (used.has(port)) port++;
  return port;
}

/** The record of a new cluster `name` in `state`: its port, a fresh admin token and its paths (nothing started). */
export function newApiserverRecord(state: ClustersState, name: string): ApiserverRecord {
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

function apiserverMarker(record: ApiserverRecord): string {
  return `--secure-port=${record.port}`;
}

/** The apiserver process of `record` is alive (whatever its health). */
export function apiserverAlive(record: ApiserverRecord): boolean {
  return isOurProcess(record.pid, APISERVER_BINARY, apiserverMarker(record));
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

/** Waits until /readyz answers 200; a ClusterSetupError with the log tail when it exits or the time is up. */
export async function waitApiserverReady(record: ApiserverRecord, timeoutMs: number): Promise<void> {
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

/** The full kube-apiserver command line (envtest-style flags; the test kit's) for `record`. */
export function apiserverArgs(record: ApiserverRecord, etcd: EtcdRecord): string[] {
  return apiserverFlags({
    port: record.port,
    certDir: record.certDir,
    etcdUrl: etcd.clientUrl,
    etcdPrefix: record.etcdPrefix,
    tokenFile: record.tokenFile,
    clientCaFile: CLIENT_PKI.caCert,
    serviceAccountKey: SERVICE_ACCOUNT_KEY,
  });
}

/** Starts the apiserver of `record` (port free, token file written) and records its pid; does not wait. */
export async function spawnApiserver(record: ApiserverRecord, etcd: EtcdRecord): Promise<void> {
  await waitPortFree(record.port, `kube-apiserver of cluster "${record.name}"`);
  await Deno.mkdir(record.certDir, { recursive: true });
  await writeFileAtomic(record.tokenFile, `${record.token},admin,admin,"system:masters"\n`);
  await Deno.writeTextFile(record.logFile, `--- started ${new Date().toISOString()}\n`, { append: true });
  record.pid = await spawnDetached(APISERVER_BINARY, apiserverArgs(record, etcd), record.logFile);
}

/** Makes the apiserver of `record` ready; says whether it was reused, started (new record) or restarted. */
export async function ensureApiserver(
  state: ClustersState,
  record: ApiserverRecord,
  isNew: boolean,
): Promise<Outcome> {
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

// The shared etcd: its record, liveness and health probes, and starting, waiting for and ensuring it.

import { isOurProcess, logTail, runsCurrentBinary, spawnDetached, stopPid, waitPortFree } from "./_process.ts";
import { ClusterSetupError } from "./_cluster_setup_error.ts";
import { ETCD_BINARY, ETCD_CLIENT_PORT, ETCD_PEER_PORT, etcdDataDir, STATE_DIR } from "./_layout.ts";
import { type ClustersState, type EtcdRecord, type Outcome, writeState } from "./_state.ts";
import { setTimeout as sleep } from "node:timers/promises";

/** The record of a fresh etcd (nothing started). */
export function newEtcdRecord(): EtcdRecord {
  return {
    pid: null,
    clientUrl: `http://127.0.0.1:${ETCD_CLIENT_PORT}`,
    clientPort: ETCD_CLIENT_PORT,
    peerPort: ETCD_PEER_PORT,
    dataDir: etcdDataDir(),
    logFile: `${STATE_DIR}/etcd.log`,
  };
}

function etcdMarker(etcd: EtcdRecord): string {
  return `--listen-client-url=${etcd.clientUrl}`;
}

/** The shared etcd process is alive (whatever its health). */
export function etcdAlive(etcd: EtcdRecord): boolean {
  return isOurProcess(etcd.pid, ETCD_BINARY, etcdMarker(etcd));
}

/** True when etcd answers /health with `{"health":"true"}` within 2 s. */
export async function etcdHealthy(etcd: EtcdRecord): Promise<boolean> {
  try {
    const response = await fetch(`${etcd.clientUrl}/health`, { signal: AbortSignal.timeout(2_000) });
    const body = await response.json() as { health?: string };
    return response.ok && body.health === "true";
  } catch {
    return false;
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
export async function ensureEtcd(state: ClustersState, fresh: boolean): Promise<Outcome> {
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

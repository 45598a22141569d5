// Stopping and starting one apiserver or the shared etcd of running clusters, for fault tests.

import { stopPid } from "./_process.ts";
import { controllerManagerAlive, spawnControllerManager } from "./_controller_manager.ts";
import { apiserverAlive, apiserverReady, spawnApiserver, waitApiserverReady } from "./_apiserver.ts";
import { ensureEtcd, etcdAlive } from "./_etcd.ts";
import { CLIENT_PKI, DEFAULT_READY_TIMEOUT_MS, SERVICE_ACCOUNT_KEY } from "./_layout.ts";
import { clusterRecord, requireState, withLock, writeState } from "./_state.ts";

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

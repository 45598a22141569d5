// `down`: stops every control-plane process (recorded ones, then orphans) and removes the state, data and kubeconfig.

import { findProcessesByExe, stopPid } from "./_process.ts";
import { CONTROLLER_MANAGER_BINARY, controllerManagerAlive } from "./_controller_manager.ts";
import { apiserverAlive } from "./_apiserver.ts";
import { etcdAlive } from "./_etcd.ts";
import { APISERVER_BINARY, ETCD_BINARY, etcdDataDir, KUBECONFIG_PATH, STATE_DIR } from "./_layout.ts";
import { type ClustersState, readStateSync, withLock } from "./_state.ts";
import type { LogOptions } from "./_up.ts";

/** What `down` stopped. */
export interface DownReport {
  stopped: number;
}

/** Cleans up processes and data left by a run whose state file is gone. */
export async function removeOrphans(log: (line: string) => void): Promise<number> {
  const orphans = findProcessesByExe([CONTROLLER_MANAGER_BINARY, APISERVER_BINARY, ETCD_BINARY]);
  if (orphans.length > 0) log(`stopping ${orphans.length} orphaned control-plane process(es): ${orphans.join(", ")}`);
  await Promise.all(orphans.map((pid) => stopPid(pid, { graceMs: 5_000 })));
  return orphans.length;
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

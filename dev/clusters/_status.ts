// `status`: liveness and readiness of etcd, every recorded apiserver and its controller manager.

import { controllerManagerAlive, controllerManagerHealthy } from "./_controller_manager.ts";
import { apiserverAlive, apiserverReady } from "./_apiserver.ts";
import { etcdAlive, etcdHealthy } from "./_etcd.ts";
import { readStateSync } from "./_state.ts";

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

// Private to src/testing: the kube-controller-manager of one test-environment cluster, started and awaited until healthy.

import type { EnvShared } from "./_env_shared.ts";
import { controllerManagerFlags, controllerManagerHealthy, controllerManagerKubeconfig } from "../control_plane.ts";
import { freePort } from "../free_port.ts";
import { logTail, pidRunning, spawnDetached } from "../process.ts";
import { TestEnvError } from "./test_env_error.ts";

/** A controller manager of a test environment: its pid (null when stopped), port and files. */
export interface EnvControllerManager {
  pid: number | null;
  port: number;
  certDir: string;
  kubeconfig: string;
  logFile: string;
}

/**
 * Starts the controller manager and waits until it answers /healthz (so namespaces are deleted and owned objects
 * collected from the start); a port taken meanwhile is retried with another.
 */
export async function startControllerManager(
  m: EnvControllerManager,
  cluster: { name: string; url: string; caFile: string },
  shared: EnvShared,
  timeoutMs: number,
): Promise<void> {
  await Deno.writeTextFile(
    m.kubeconfig,
    controllerManagerKubeconfig(cluster, shared.pki),
    { mode: 0o600 },
  );
  for (let attempt = 1;; attempt++) {
    m.port = freePort();
    await Deno.writeTextFile(m.logFile, `--- started ${new Date().toISOString()}\n`, { append: true });
    m.pid = await spawnDetached(
      shared.bins.controllerManager,
      controllerManagerFlags({
        kubeconfig: m.kubeconfig,
        port: m.port,
        certDir: m.certDir,
        serviceAccountKey: shared.serviceAccountKey,
        rootCaFile: cluster.caFile,
        pki: shared.pki,
      }),
      m.logFile,
    );
    const deadline = performance.now() + timeoutMs;
    while (!(await controllerManagerHealthy(m))) {
      if (!pidRunning(m.pid)) {
        const tail = await logTail(m.logFile);
        if (attempt < 3 && /address already in use/.test(tail)) break;
        throw new TestEnvError(
          `kube-controller-manager of cluster "${cluster.name}" exited during startup; last lines of ${m.logFile}:\n${tail}`,
        );
      }
      if (performance.now() > deadline) {
        throw new TestEnvError(
          `kube-controller-manager of cluster "${cluster.name}" did not answer /healthz within ${
            timeoutMs / 1000
          } s; ` +
            `last lines of ${m.logFile}:\n${await logTail(m.logFile)}`,
        );
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    if (pidRunning(m.pid)) return;
  }
}

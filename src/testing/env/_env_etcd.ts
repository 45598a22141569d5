// Private to src/testing: the one etcd of a test environment, on free ports, its data on tmpfs when there is one.

import { freePort } from "../free_port.ts";
import { logTail, pidRunning, spawnDetached, stopPid } from "../process.ts";
import { TestEnvError } from "./test_env_error.ts";

/** A running etcd of one test environment. */
export interface EnvEtcd {
  url: string;
  pid: number;
  dataDir: string;
  logFile: string;
}

async function healthy(url: string): Promise<boolean> {
  try {
    const response = await fetch(`${url}/health`, { signal: AbortSignal.timeout(2_000) });
    const body = await response.json() as { health?: string };
    return response.ok && body.health === "true";
  } catch {
    return false;
  }
}

/** Where the data goes: /dev/shm when the machine has it (etcd on tmpfs is several times faster), else `dir`. */
async function dataDirFor(dir: string): Promise<string> {
  try {
    if ((await Deno.stat("/dev/shm")).isDirectory) {
      return await Deno.makeTempDir({ dir: "/dev/shm", prefix: "operator-hub-testenv-etcd-" });
    }
  } catch {
    // No tmpfs (macOS): beside the rest of the environment.
  }
  return `${dir}/etcd-data`;
}

/** Starts etcd on free ports and waits until it reports healthy; tries new ports when a port was taken meanwhile. */
export async function startEtcd(binary: string, dir: string, timeoutMs = 30_000): Promise<EnvEtcd> {
  const dataDir = await dataDirFor(dir);
  const logFile = `${dir}/etcd.log`;
  for (let attempt = 1;; attempt++) {
    const url = `http://127.0.0.1:${freePort()}`;
    await Deno.writeTextFile(logFile, `--- started ${new Date().toISOString()}\n`, { append: true });
    const pid = await spawnDetached(binary, [
      `--data-dir=${dataDir}`,
      `--listen-client-url=${url}`,
      `--listen-peer-url=http://127.0.0.1:${freePort()}`,
    ], logFile);
    const deadline = performance.now() + timeoutMs;
    while (!(await healthy(url))) {
      if (!pidRunning(pid)) {
        const tail = await logTail(logFile);
        if (attempt < 3 && /address already in use/.test(tail)) break;
        throw new TestEnvError(`etcd (pid ${pid}) exited during startup; last lines of ${logFile}:\n${tail}`);
      }
      if (performance.now() > deadline) {
        await stopPid(pid, { signal: "SIGKILL" });
        throw new TestEnvError(`etcd (pid ${pid}) did not report healthy on ${url} within ${timeoutMs / 1000} s`);
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    if (pidRunning(pid)) return { url, pid, dataDir, logFile };
  }
}

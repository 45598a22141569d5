// The hub under test as a real subprocess (exactly `deno task run`'s permissions), seen from outside:
// readiness timing, /metrics counters, CPU and memory from /proc.

import { HubProcess, runTaskPermissions } from "../../dev/support/hub_process.ts";
import { cpuMs, memoryMb } from "./proc.ts";

/** Counters read from the hub's /metrics. */
export interface HubCounters {
  reconciles: number;
  patches: number;
  requests: number;
  /** Lists and watches started, summed over clusters (from /status). */
  connectAttempts: number;
  relists: number;
}

/** A running hub with the bench's measurements. */
export class BenchHub {
  readonly proc: HubProcess;
  readonly spawnedAt: number;
  #peakSampled = 0;
  #sampler: ReturnType<typeof setInterval> | undefined;

  private constructor(proc: HubProcess, spawnedAt: number) {
    this.proc = proc;
    this.spawnedAt = spawnedAt;
  }

  /**
   * Spawns the hub on `clusters`, watching only `namespaces`, with extra hub flags and extra flags
   * for `deno run` itself (e.g. --cpu-prof), which the run task's permission flags are joined with; `entry` runs
   * another script than src/cli/main.ts (relative to the repository root: an A/B baseline copy, bench/tools/ab.ts).
   */
  static start(
    clusters: string[],
    namespaces: string[],
    args: string[] = [],
    denoFlags: string[] = [],
    env: Record<string, string> = {},
    entry?: string,
  ): BenchHub {
    const spawnedAt = performance.now();
    const proc = HubProcess.start({
      clusters,
      env,
      entry,
      args: [...namespaces.flatMap((n) => ["--namespace", n]), ...args],
      permissions: [...runTaskPermissions(), ...runTaskV8Flags(entry), ...denoFlags],
    });
    const hub = new BenchHub(proc, spawnedAt);
    hub.#sampler = setInterval(() => {
      const m = memoryMb(proc.pid);
      if (m.peak > hub.#peakSampled) hub.#peakSampled = m.peak;
    }, 250);
    return hub;
  }

  get pid(): number {
    return this.proc.pid;
  }

  /** Polls /readyz every 20 ms; resolves with seconds from spawn to the first 200. */
  async waitReady(timeoutMs = 120_000): Promise<number> {
    const deadline = this.spawnedAt + timeoutMs;
    while (performance.now() < deadline) {
      if (this.proc.exited) throw new Error(`hub exited with ${this.proc.exited.code}\n${this.proc.tail()}`);
      try {
        const res = await fetch(`http://127.0.0.1:${this.proc.port}/readyz`);
        await res.body?.cancel();
        if (res.status === 200) return (performance.now() - this.spawnedAt) / 1000;
      } catch { /* not listening yet */ }
      await sleep(20);
    }
    throw new Error(`hub not ready after ${timeoutMs} ms\n${this.proc.tail()}`);
  }

  /** Waits until the shared queue is empty and nothing is in flight for `quietMs` in a row. */
  async waitIdle(quietMs = 500, timeoutMs = 300_000): Promise<void> {
    const deadline = performance.now() + timeoutMs;
    let idleSince: number | undefined;
    while (performance.now() < deadline) {
      const s = (await this.proc.get("/status")).body;
      const idle = s?.controller && s.controller.queued === 0 && s.controller.inFlight === 0;
      if (idle) {
        idleSince ??= performance.now();
        if (performance.now() - idleSince >= quietMs) return;
      } else idleSince = undefined;
      await sleep(50);
    }
    throw new Error(`hub still busy after ${timeoutMs} ms`);
  }

  async counters(): Promise<HubCounters> {
    const text = (await this.proc.get("/metrics")).text;
    const status = (await this.proc.get("/status")).body;
    const clusters = Object.values(status?.clusters ?? {}) as { connectAttempts?: number; relists?: number }[];
    return {
      reconciles: sumMetric(text, "controller_runtime_reconcile_total"),
      patches: sumMetric(text, "rest_client_requests_total", 'method="PATCH"'),
      requests: sumMetric(text, "rest_client_requests_total"),
      connectAttempts: clusters.reduce((n, c) => n + (c.connectAttempts ?? 0), 0),
      relists: clusters.reduce((n, c) => n + (c.relists ?? 0), 0),
    };
  }

  cpuMs(): number {
    return cpuMs(this.proc.pid);
  }

  /** Current RSS, and the peak (VmHWM, and the bench's own samples as a cross-check) in MB. */
  memory(): { rss: number; peak: number } {
    const m = memoryMb(this.proc.pid);
    return { rss: m.rss, peak: Math.max(m.peak, this.#peakSampled) };
  }

  /** SIGTERM, then checks the exit code. */
  async stop(): Promise<void> {
    clearInterval(this.#sampler);
    const status = await this.proc.stop();
    if (status.code !== 0) console.error(`warning: hub exited with ${status.code}\n${this.proc.tail()}`);
  }
}

/**
 * The `--v8-flags=...` of the `run` task, so the hub runs with the heap settings users get: of the deno.json of the
 * checkout `entry` belongs to (the nearest one above it, relative to the repository root: an A/B baseline runs with
 * its own settings), or of this repository's.
 */
export function runTaskV8Flags(entry?: string): string[] {
  const root = new URL("../../", import.meta.url);
  let config: { tasks?: { run?: string } } | undefined;
  for (let dir = entry ? new URL(".", new URL(entry, root)) : root; !config; dir = new URL("..", dir)) {
    try {
      config = JSON.parse(Deno.readTextFileSync(new URL("deno.json", dir)));
    } catch (err) {
      if (!(err instanceof Deno.errors.NotFound) || dir.href === root.href || dir.pathname === "/") throw err;
    }
  }
  return String(config.tasks?.run ?? "").split(/\s+/).filter((w) => w.startsWith("--v8-flags"));
}

/** Sums every sample of a Prometheus counter whose labels contain `labelFilter`. */
export function sumMetric(text: string, name: string, labelFilter = ""): number {
  let sum = 0;
  for (const line of text.split("\n")) {
    if (!line.startsWith(name + "{") && !line.startsWith(name + " ")) continue;
    if (labelFilter && !line.includes(labelFilter)) continue;
    sum += Number(line.slice(line.lastIndexOf(" ") + 1));
  }
  return sum;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

// One throughput run: M objects per cluster created at once while the hub, the kube-rs peer or the ceiling (a
// minimal direct client: the same creates and one status write per object) gives them their UUIDs; completion is
// timed by an independent watch per cluster.

import { OK_MESSAGE } from "../../src/operators/uuid/status_rule.ts";
import type { BenchCluster, Created, Creation } from "./cluster.ts";
import { type BenchHub, sleep } from "./hub.ts";
import type { PeerProcess } from "./peer.ts";
import {
  type Config,
  debug,
  load1,
  log,
  objectNames,
  snapshot,
  startBenchHub,
  startOperator,
  withNamespace,
} from "./run.ts";
import { percentile } from "./stats.ts";

export type RunKind = "hub" | "peer" | "ceiling" | "ceiling+watch";

export interface ThroughputRun {
  kind: RunKind;
  objects: number;
  creation: Creation;
  /** The ceiling's concurrent status writes (the hub's --concurrency for the hub). */
  concurrency: number;
  /** 1-minute load average, mean of start and end. */
  load1: number;
  /** The operator's (hub or peer) CPU per object and peak RSS. */
  cpuMsPerObject?: number;
  peakRssMb?: number;
  seconds: number;
  objectsPerSecond: number;
  latencyMs: { p50: number; p95: number; p99: number };
  writesPerObject: number;
  apiRequestsPerObject: number;
  infraCpuMsPerObject: number;
  machineBusyPct: number;
  otherCpuPct: number;
  /** CPU of the bench process itself per object (creates and the observing watch; plus the status writes for the ceiling). */
  benchCpuMsPerObject: number;
  series: [number, number][];
  hubCpuMs?: number;
  hubReconciles?: number;
  hubCpuMsPerReconcile?: number;
  hubCpuMsPerObject?: number;
  hubPatches?: number;
  /** Watch reconnects and relists during the run: a slow or broken stream shows here. */
  hubReconnects?: number;
  hubRelists?: number;
  hubPeakRssMb?: number;
  hubStartupSeconds?: number;
  missing?: number;
  /** Why the run does not count (an apiserver restarted under it, a watch broke), if so. */
  disturbed?: string;
}

/** A single-producer queue from the ceiling's creators to its writers. */
class Pipe<T> {
  readonly #items: T[] = [];
  #head = 0;
  #closed = false;
  #waiters: ((v: T | undefined) => void)[] = [];
  push(v: T): void {
    const w = this.#waiters.shift();
    if (w) w(v);
    else this.#items.push(v);
  }
  close(): void {
    this.#closed = true;
    for (const w of this.#waiters.splice(0)) w(undefined);
  }
  take(): Promise<T | undefined> {
    if (this.#head < this.#items.length) return Promise.resolve(this.#items[this.#head++]);
    if (this.#closed) return Promise.resolve(undefined);
    return new Promise((r) => this.#waiters.push(r));
  }
}

/** How one throughput run differs from the defaults: creation style, ceiling writers, the peer's binary. */
export interface ThroughputOptions {
  creation?: Creation;
  writers?: number;
  peerBinary?: string;
}

export async function throughputRun(
  kind: RunKind,
  cfg: Config,
  names: string[],
  cl: BenchCluster[],
  opts: ThroughputOptions = {},
): Promise<ThroughputRun> {
  const creation = opts.creation ?? "plain";
  const writerCount = opts.writers ?? cfg.concurrency;
  return await withNamespace(cl, `${kind}-${creation}`, async (ns) => {
    const M = cfg.objects, N = cl.length, total = M * N;
    debug(`${kind}: namespace ${ns} ready`);
    const watches = await Promise.all(cl.map((c) => c.watchOk(ns)));
    // The diagnostic variant adds what an operator's own watch costs the apiservers: a second stream.
    const extra = kind === "ceiling+watch" ? await Promise.all(cl.map((c) => c.watchOk(ns))) : [];
    debug(`${kind}: watches open`);
    let hub: BenchHub | undefined;
    let peer: PeerProcess | undefined;
    const loadBefore = load1();
    try {
      let startup: number | undefined;
      if (kind === "hub") {
        hub = startBenchHub(cfg, names, ns);
        startup = await hub.waitReady();
        await sleep(300);
      } else if (kind === "peer") {
        peer = startOperator("peer", cfg, names, ns, opts.peerBinary, cl[0].statusSubresource) as PeerProcess;
        startup = await peer.waitReady();
        await sleep(300);
      }
      const before = await snapshot(cl, hub);
      const peerCpuBefore = peer?.cpuMs() ?? 0;
      debug(`${kind}: start`);
      const t0 = performance.now();
      const createdAt = cl.map(() => new Map<string, number>());
      const pipes = cl.map(() => new Pipe<Created>());
      const objs = objectNames("o-", M);
      const direct = kind === "ceiling" || kind === "ceiling+watch";
      const creators = Promise.all(cl.map((c, i) =>
        c.createMany(ns, objs, cfg.createConcurrency, (cr) => {
          createdAt[i].set(cr.name, cr.createdAt);
          if (direct) pipes[i].push(cr);
        }, creation)
      )).finally(() => pipes.forEach((p) => p.close()));
      let writers: Promise<unknown> = Promise.resolve();
      if (direct) {
        writers = Promise.all(Array.from({ length: writerCount }, async (_, w) => {
          const i = w % N;
          for (let item = await pipes[i].take(); item; item = await pipes[i].take()) {
            await cl[i].writeStatus(ns, item.name, item.resourceVersion, {
              uuid: crypto.randomUUID(),
              state: "Ok",
              message: OK_MESSAGE,
              observedGeneration: 1,
            });
          }
        }));
      }
      const progress = setInterval(() => {
        const pending = cl.map((c) => c.pending.size).join("/");
        const oldest = cl.flatMap((c) =>
          [...c.pending].map(([k, t]) =>
            `${c.name} ${k} ${Math.round(performance.now() - t)} ms`
          )
        )[0];
        log(`${kind}: created ${createdAt.map((m) => m.size).join("/")}, Ok ${
          watches.map((w) => w.seen.size).join("/")
        }, pending ${pending} ${oldest ?? ""}`);
      }, 10_000);
      await creators;
      const timeoutMs = 120_000 + total * 20;
      let missing = 0;
      try {
        await Promise.all(watches.map((w) => w.waitCount(M, timeoutMs)));
      } catch (err) {
        missing = total - watches.reduce((s, w) => s + w.seen.size, 0);
        log(`${kind}: ${(err as Error).message}`);
      }
      await writers;
      clearInterval(progress);
      const seenTimes = watches.flatMap((w) => [...w.seen.values()]).sort((a, b) => a - b);
      const tEnd = seenTimes[seenTimes.length - 1] ?? performance.now();
      if (hub) await hub.waitIdle(400);
      if (peer) await sleep(500);
      const after = await snapshot(cl, hub);
      const peerCpu = peer ? peer.cpuMs() - peerCpuBefore : 0;
      const latencies = watches.flatMap((w, i) =>
        [...w.seen].map(([name, at]) => at - (createdAt[i].get(name) ?? NaN))
      );
      const seconds = (tEnd - t0) / 1000;
      const busy = after.machine.busyMs - before.machine.busyMs;
      const span = after.machine.totalMs - before.machine.totalMs;
      const hubCpu = hub ? after.hubCpu! - before.hubCpu! : 0;
      const ours = hubCpu + peerCpu + (after.infraCpu - before.infraCpu) + (after.benchCpu - before.benchCpu);
      const run: ThroughputRun = {
        kind,
        objects: total,
        creation,
        concurrency: kind === "hub" || kind === "peer" ? cfg.concurrency : writerCount,
        load1: (loadBefore + load1()) / 2,
        seconds,
        objectsPerSecond: (total - missing) / seconds,
        latencyMs: { p50: percentile(latencies, 50), p95: percentile(latencies, 95), p99: percentile(latencies, 99) },
        writesPerObject: (after.apiWrites - before.apiWrites) / total,
        apiRequestsPerObject: (after.apiRequests - before.apiRequests) / total,
        infraCpuMsPerObject: (after.infraCpu - before.infraCpu) / total,
        machineBusyPct: 100 * busy / span,
        benchCpuMsPerObject: (after.benchCpu - before.benchCpu) / total,
        otherCpuPct: 100 * Math.max(0, busy - ours) / span,
        series: seenTimes.map((t, i) => [(t - t0) / 1000, i + 1]),
        missing,
      };
      const reconnects = watches.reduce((n, w) => n + w.reconnects, 0);
      // Every PATCH the apiservers counted must be ours; anything else means other tests wrote Uuids meanwhile.
      const ourWrites = kind === "hub"
        ? after.hub!.patches - before.hub!.patches
        : kind === "peer"
        ? after.apiWrites - before.apiWrites
        : total;
      const extraWrites = after.apiWrites - before.apiWrites - ourWrites;
      const reasons = [
        before.infraPids !== after.infraPids ? "an apiserver or etcd restarted" : "",
        after.apiWrites < before.apiWrites ? "apiserver counters went backwards" : "",
        after.connectionRetries > before.connectionRetries ? "connection failures" : "",
        reconnects ? "the observing watch broke" : "",
        after.conflicts > before.conflicts ? "another process wrote the ceiling's objects" : "",
        extraWrites ? `${extraWrites} writes to uuid objects by other processes` : "",
        missing ? `${missing} objects never reached Ok` : "",
      ].filter(Boolean);
      if (reasons.length) run.disturbed = reasons.join("; ");
      if (hub) {
        const reconciles = after.hub!.reconciles - before.hub!.reconciles;
        Object.assign(run, {
          hubCpuMs: hubCpu,
          hubReconciles: reconciles,
          hubCpuMsPerReconcile: hubCpu / reconciles,
          hubCpuMsPerObject: hubCpu / total,
          hubPatches: after.hub!.patches - before.hub!.patches,
          hubReconnects: after.hub!.connectAttempts - before.hub!.connectAttempts,
          hubRelists: after.hub!.relists - before.hub!.relists,
          hubPeakRssMb: hub.memory().peak,
          hubStartupSeconds: startup,
          cpuMsPerObject: hubCpu / total,
          peakRssMb: hub.memory().peak,
        });
      }
      if (peer) Object.assign(run, { cpuMsPerObject: peerCpu / total, peakRssMb: peer.memory().peak });
      return run;
    } finally {
      await hub?.stop();
      await peer?.stop();
      await Promise.all([...watches, ...extra].map((w) => w.stop()));
    }
  });
}

/** A run the bench repeated because something else disturbed it. */
export interface Disturbance {
  phase: string;
  kind?: string;
  reason: string;
}

/** Runs once, and again (up to 3 more times) while the run is disturbed; records each disturbance. */
export async function steadyRun(
  kind: RunKind,
  cfg: Config,
  names: string[],
  cl: BenchCluster[],
  opts: ThroughputOptions,
  phase: string,
  disturbed: Disturbance[],
): Promise<ThroughputRun> {
  let run = await throughputRun(kind, cfg, names, cl, opts);
  for (let retry = 0; run.disturbed && retry < 3; retry++) {
    log(`${phase} ${kind} disturbed (${run.disturbed}); repeating it`);
    disturbed.push({ phase, kind, reason: run.disturbed });
    await sleep(5000);
    run = await throughputRun(kind, cfg, names, cl, opts);
  }
  return run;
}

/** The ceiling at every level of --ceiling-concurrency, in turn; the most objects per second wins. */
export async function bestCeiling(
  cfg: Config,
  names: string[],
  cl: BenchCluster[],
  opts: ThroughputOptions,
  phase: string,
  disturbed: Disturbance[],
): Promise<{ best: ThroughputRun; levels: { concurrency: number; objectsPerSecond: number }[] }> {
  const runs: ThroughputRun[] = [];
  for (const writers of cfg.ceilingConcurrencies) {
    const run = await steadyRun("ceiling", cfg, names, cl, { ...opts, writers }, phase, disturbed);
    log(`${phase} ceiling at concurrency ${writers}: ${Math.round(run.objectsPerSecond)} obj/s`);
    runs.push(run);
  }
  const best = runs.reduce((a, b) => (b.objectsPerSecond > a.objectsPerSecond ? b : a));
  return { best, levels: runs.map((r) => ({ concurrency: r.concurrency, objectsPerSecond: r.objectsPerSecond })) };
}

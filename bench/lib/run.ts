// What every bench phase shares: the run's configuration, fresh namespaces, CPU and counter snapshots, logging,
// and starting the hub under test.

import { readStateSync } from "../../dev/clusters/clusters.ts";
import type { BenchCluster } from "./cluster.ts";
import { BenchHub, type HubCounters } from "./hub.ts";
import { installProductionCrd, installSeedCrd } from "../../dev/support/crds.ts";
import { PeerProcess } from "./peer.ts";
import { cpuMs, cpuMsOf, machineCpu } from "./proc.ts";

export const PHASES = [
  "throughput",
  "idle",
  "fairness",
  "scale",
  "backlog",
  "kubectl",
  "peer",
  "clusters",
  "mirror",
  "shards",
  "profiles",
  "relist",
  "background",
  "admission",
  "memory",
] as const;
export type Phase = typeof PHASES[number];

export interface Config {
  clusters: number;
  objects: number;
  concurrency: number;
  createConcurrency: number;
  reps: number;
  idleObjects: number;
  fairnessObjects: number;
  scaleObjects: number;
  phases: Set<Phase>;
  hubArgs: string[];
  denoFlags: string[];
  out: string;
  svg: string;
  quick: boolean;
  /** Objects per cluster in the backlog phase. */
  backlogObjects: number;
  /** Concurrency levels the ceiling is measured at; the best one wins. */
  ceilingConcurrencies: number[];
  /** CRD shapes the backlog and kubectl phases run on. */
  shapes: Shape[];
  /** The hub's script instead of src/cli/main.ts, relative to the repository root (bench/tools/ab.ts's baseline). */
  hubEntry?: string;
  /** Leaves the hub's --concurrency at its own default instead of passing `concurrency` (bench/tools/ab.ts). */
  hubDefaultConcurrency?: boolean;
  /** Objects per cluster of the background phase (`--background`); default 3000,1000,200 (a tenth with --quick). */
  background?: { configMaps: number; secrets: number; deployments: number; bytes: number };
  /** The clusters phase's --operators: `uuid` (default) or the hub's default operators too (`--clusters-operators`). */
  clustersOperators?: "uuid" | "default" | "both";
}

/** The Uuid CRD's shape: with the status subresource (crds/uuid.yaml), or the seed article's (no subresource). */
export type Shape = "status" | "seed";
export const SHAPES: Shape[] = ["status", "seed"];

/** PIDs of the apiservers, their controller managers and etcd, whose CPU is reported separately from the hub's. */
export function infraPids(): number[] {
  const state = readStateSync();
  if (!state) return [];
  return [state.etcd.pid, ...state.clusters.map((c) => c.pid), ...(state.controllerManagers ?? []).map((c) => c.pid)]
    .filter((p): p is number => typeof p === "number");
}

export function nsName(kind: string): string {
  const rand = crypto.getRandomValues(new Uint8Array(3)).reduce((s, b) => s + b.toString(16).padStart(2, "0"), "");
  return `bench-${kind.replace(/[^a-z0-9-]+/g, "-")}-${rand}`;
}

export function objectNames(prefix: string, n: number): string[] {
  return Array.from({ length: n }, (_, i) => `${prefix}${String(i).padStart(5, "0")}`);
}

export function debug(msg: string): void {
  if (Deno.env.get("BENCH_DEBUG")) log(msg);
}

export function log(msg: string): void {
  console.error(`[bench ${new Date().toISOString().slice(11, 19)}] ${msg}`);
}

/** Creates `ns` in every cluster, runs `fn`, and always deletes its objects and the namespace. */
export async function withNamespace<T>(cl: BenchCluster[], kind: string, fn: (ns: string) => Promise<T>): Promise<T> {
  const ns = nsName(kind);
  await Promise.all(cl.map((c) => c.createNamespace(ns)));
  try {
    return await fn(ns);
  } finally {
    await Promise.all(cl.map((c) => c.cleanupNamespace(ns).catch((err) => log(`cleanup of ${ns} failed: ${err}`))));
  }
}

/** CPU and counters at one moment, for deltas over a run. */
export interface Snapshot {
  at: number;
  infraPids: string;
  connectionRetries: number;
  conflicts: number;
  infraCpu: number;
  benchCpu: number;
  machine: { busyMs: number; totalMs: number };
  apiWrites: number;
  apiRequests: number;
  hubCpu?: number;
  hub?: HubCounters;
}

export async function snapshot(cl: BenchCluster[], hub?: BenchHub): Promise<Snapshot> {
  const counters = await Promise.all(cl.map((c) => c.requestCounters()));
  const infra = infraPids();
  return {
    at: performance.now(),
    infraPids: infra.join(","),
    connectionRetries: cl.reduce((s, c) => s + c.connectionRetries, 0),
    conflicts: cl.reduce((s, c) => s + c.conflicts, 0),
    infraCpu: cpuMsOf(infra),
    benchCpu: cpuMs(Deno.pid),
    machine: machineCpu(),
    apiWrites: counters.reduce((s, c) => s + c.writes, 0),
    apiRequests: counters.reduce((s, c) => s + c.all, 0),
    hubCpu: hub?.cpuMs(),
    hub: hub ? await hub.counters() : undefined,
  };
}

/** What a phase adds to the hub's command line: more watched namespaces, more flags (after the run's own). */
export interface HubExtras {
  namespaces?: string[];
  args?: string[];
}

/** The hub under test on `names`, watching `ns`, with the run's --concurrency, extra flags and Deno flags. */
export function startBenchHub(cfg: Config, names: string[], ns: string, extras: HubExtras = {}): BenchHub {
  const args = [
    ...(cfg.hubDefaultConcurrency ? [] : ["--concurrency", String(cfg.concurrency)]),
    ...cfg.hubArgs,
    ...(extras.args ?? []),
  ];
  return BenchHub.start(names, [ns, ...(extras.namespaces ?? [])], args, cfg.denoFlags, {}, cfg.hubEntry);
}

/**
 * An operator under test, seen from outside: the hub, the kube-rs peer (`peer`, bench/lib/peer.ts) or the
 * controller-runtime peer (`go_peer`, bench/lib/peer_go.ts).
 */
export type OperatorKind = "hub" | "peer" | "go_peer";
export interface RunningOperator {
  readonly spawnedAt: number;
  waitReady(timeoutMs?: number): Promise<number>;
  cpuMs(): number;
  memory(): { rss: number; peak: number };
  stop(): Promise<void>;
}

/** Starts the hub or a peer (`peerBinary`: that peer's binary) on `names`, watching `ns`. */
export function startOperator(
  kind: OperatorKind,
  cfg: Config,
  names: string[],
  ns: string,
  peerBinary: string | undefined,
  statusSubresource: boolean,
  hubExtras: HubExtras = {},
): RunningOperator {
  if (kind === "hub") return startBenchHub(cfg, names, ns, hubExtras);
  if (!peerBinary) throw new Error(`the ${kind === "peer" ? "kube-rs" : "controller-runtime"} peer was not built`);
  return PeerProcess.start(peerBinary, names, ns, statusSubresource);
}

/** Puts the Uuid CRD of every cluster into `shape` (in place: objects stay) and re-reads discovery. */
export async function setShape(cl: BenchCluster[], shape: Shape): Promise<void> {
  await Promise.all(cl.map((c) => shape === "seed" ? installSeedCrd(c.name) : installProductionCrd(c.name)));
  await Promise.all(cl.map((c) => c.detect()));
  const wrong = cl.filter((c) => c.statusSubresource !== (shape === "status"));
  if (wrong.length) throw new Error(`CRD shape ${shape} not served by ${wrong.map((c) => c.name).join(", ")}`);
}

/** The 1-minute load average now. */
export function load1(): number {
  return Deno.loadavg()[0];
}

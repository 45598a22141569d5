// The backlog phase: N objects per cluster made with real `kubectl apply` while no operator runs, then the hub or
// the kube-rs peer started (or the minimal direct client, the ceiling, drains them); timed from process start to
// the last object seen Ok by an independent watch.
//
// Assumptions: each run gets a fresh namespace and a fresh backlog; the operator only watches that namespace.
// An `empty` run starts the operator on an empty namespace and waits until it is synced and quiet: its CPU is the
// start-up cost that the per-object figure is net of.

import { kubectlOk } from "../../dev/support/kubectl.ts";
import type { BenchCluster, OkWatch } from "./cluster.ts";
import { BenchHub, sleep } from "./hub.ts";
import {
  type Config,
  type HubExtras,
  load1,
  log,
  objectNames,
  type OperatorKind,
  type RunningOperator,
  snapshot,
  startOperator,
  withNamespace,
} from "./run.ts";

/** What one backlog run measured. */
export interface BacklogRun {
  kind: OperatorKind | "ceiling";
  /** True for a start on an empty namespace (the start-up cost). */
  empty: boolean;
  objects: number;
  /** Ceiling only: its concurrent status writes. */
  concurrency?: number;
  /** From the operator's spawn (the ceiling: its first list) to the last object seen Ok. */
  seconds: number;
  /** From the same start to the first object seen Ok (start-up, lists and pre-flight before any write). */
  firstSeconds?: number;
  /** Operator CPU from spawn until drained and quiet (start-up included). */
  cpuMs?: number;
  peakRssMb?: number;
  /** RSS once drained and quiet, MB. */
  rssMb?: number;
  writesPerObject: number;
  /** Seconds `kubectl apply` took to make the backlog (all clusters in parallel). */
  kubectlSeconds: number;
  load1: number;
  missing: number;
}

/**
 * Makes `names` in `ns` of one cluster with real `kubectl apply` (one apply of a List, client-side). The objects
 * carry no spec, like the seed article's: its CRD has no spec in the schema, and kubectl validates strictly.
 */
export async function kubectlApply(context: string, ns: string, names: string[]): Promise<void> {
  const items = names.map((name) => ({
    apiVersion: "demo.operator/v1",
    kind: "Uuid",
    metadata: { name, namespace: ns },
  }));
  const doc = JSON.stringify({ apiVersion: "v1", kind: "List", items });
  await kubectlOk(context, ["apply", "-f", "-", "-o", "name"], { stdin: doc, timeoutMs: 900_000 });
}

/** Options of one backlog run. */
export interface BacklogOptions {
  kind: OperatorKind | "ceiling";
  empty?: boolean;
  concurrency?: number;
  /** The kube-rs peer's binary (kind `peer`). */
  peerBinary?: string;
  /** The controller-runtime peer's binary (kind `go_peer`). */
  goPeerBinary?: string;
  /** More namespaces and flags for the hub (the background phase). */
  hubExtras?: HubExtras;
}

export async function backlogRun(
  cfg: Config,
  names: string[],
  cl: BenchCluster[],
  opts: BacklogOptions,
): Promise<BacklogRun> {
  const empty = opts.empty === true;
  const n = empty ? 0 : cfg.backlogObjects;
  return await withNamespace(cl, `backlog-${opts.kind}`, async (ns) => {
    const t0 = performance.now();
    if (n > 0) await Promise.all(cl.map((c) => kubectlApply(c.name, ns, objectNames("b-", n))));
    const kubectlSeconds = (performance.now() - t0) / 1000;
    await sleep(500);
    const watches: OkWatch[] = await Promise.all(cl.map((c) => c.watchOk(ns)));
    const before = await snapshot(cl);
    const loadBefore = load1();
    let op: RunningOperator | undefined;
    try {
      let startedAt: number;
      let ceiling: Promise<unknown> = Promise.resolve();
      if (opts.kind === "ceiling") {
        startedAt = performance.now();
        ceiling = drainDirect(cl, ns, opts.concurrency ?? cfg.concurrency);
      } else {
        const bin = opts.kind === "go_peer" ? opts.goPeerBinary : opts.peerBinary;
        op = startOperator(opts.kind, cfg, names, ns, bin, cl[0].statusSubresource, opts.hubExtras);
        startedAt = op.spawnedAt;
      }
      let missing = 0;
      if (n > 0) {
        try {
          await Promise.all(watches.map((w) => w.waitCount(n, 120_000 + n * cl.length * 40)));
        } catch (err) {
          missing = n * cl.length - watches.reduce((s, w) => s + w.seen.size, 0);
          log(`backlog ${opts.kind}: ${(err as Error).message}`);
        }
      }
      const seen = watches.flatMap((w) => [...w.seen.values()]);
      let tEnd = seen.length ? Math.max(...seen) : performance.now();
      await ceiling;
      if (op) {
        const ready = await op.waitReady();
        if (n === 0) tEnd = op.spawnedAt + ready * 1000;
        // Quiet: the hub's queue empty; the peer has no such window, so it gets the same half second.
        if (op instanceof BenchHub) await op.waitIdle(400);
        else await sleep(500);
      }
      const after = await snapshot(cl);
      const total = n * cl.length;
      const run: BacklogRun = {
        kind: opts.kind,
        empty,
        objects: total,
        seconds: (tEnd - startedAt) / 1000,
        writesPerObject: total ? (after.apiWrites - before.apiWrites) / total : 0,
        kubectlSeconds,
        load1: (loadBefore + load1()) / 2,
        missing,
      };
      if (opts.concurrency !== undefined) run.concurrency = opts.concurrency;
      if (seen.length) run.firstSeconds = (Math.min(...seen) - startedAt) / 1000;
      if (op) {
        run.cpuMs = op.cpuMs();
        const m = op.memory();
        run.peakRssMb = m.peak;
        run.rssMb = m.rss;
      }
      return run;
    } finally {
      await op?.stop();
      await Promise.all(watches.map((w) => w.stop()));
    }
  });
}

/** The ceiling on a backlog: list every cluster, then one status write per object with `concurrency` writers. */
async function drainDirect(cl: BenchCluster[], ns: string, concurrency: number): Promise<void> {
  const queues = await Promise.all(cl.map((c) => c.listNames(ns)));
  const next = cl.map(() => 0);
  await Promise.all(Array.from({ length: concurrency }, async (_, w) => {
    const i = w % cl.length;
    for (let k = next[i]++; k < queues[i].length; k = next[i]++) {
      const item = queues[i][k];
      await cl[i].writeStatus(ns, item.name, item.resourceVersion, {
        uuid: crypto.randomUUID(),
        state: "Ok",
        message: "UUID assigned by the bench's ceiling",
      });
    }
  }));
}

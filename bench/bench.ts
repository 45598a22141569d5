// `deno task bench`: the hub against the apiservers' own ceiling on the real local clusters; prints a
// Markdown table, writes JSON (bench/last.json) and an SVG chart (bench/last.svg).
//
// Phases (each figure is the median of `--reps` repetitions, with min and max):
// - throughput: M objects per cluster created at once; the hub (a real subprocess, `deno task run`'s
//   permissions and --v8-flags) against the ceiling, a minimal direct client (no watch, no queue, no
//   framework) that makes the same creates and the same one status write per object at the same
//   concurrency, in the same run, rotating which goes first. A third, diagnostic run adds one more
//   watch stream to the ceiling: what serving an operator's watch costs the apiservers. Completion is
//   timed by an independent watch in every run.
// - idle: single objects created one at a time on an idle hub.
// - fairness: 3,000 objects waiting in cluster A when the hub starts, then one object in cluster B.
// - scale: 3 × 10,000 objects; one first start that writes them all, then restarts: startup to
//   ready, RSS.
// - backlog (bench/_backlog.ts): N objects per cluster made by real `kubectl apply` while no operator runs,
//   then the hub started; seconds from process start to all Ok, CPU per object net of an empty start, writes
//   per object, peak RSS; against the ceiling draining the same backlog. On both CRD shapes.
// - kubectl: the throughput phase with objects created exactly as `kubectl apply` creates them; on both shapes.
// - mirror (bench/_mirror.ts): the Mirror operator, home = the first cluster, targets = the next two: source change →
//   both copies p50/p99 with 1 Mirror and with 500, writes per change per target, a 100-change storm on one source.
// - shards (bench/_shards_phase.ts): three --shard replicas on 30 namespaced clusters: takeover after kill -9 and
//   SIGTERM, clusters moved when a fourth joins, fence violations, Lease writes per second at 30 and 1,000 clusters.
// - peer: the kube-rs peer (bench/peers/kube_rs, built with cargo on first use) runs beside the hub in the
//   backlog, kubectl and idle phases, alternating with it in the same run; the hub-over-peer ratios.
// The ceiling is measured at several concurrency levels (--ceiling-concurrency); the best one wins.
//
// Assumptions: the local clusters may be shared with tests running at the same time, so every phase
// uses fresh namespaces, the hub only watches those (--namespace), a run disturbed by others (an
// apiserver restart, foreign writes to Uuids) is repeated, and the report gives the CPU used by
// other processes during each run so noisy figures can be recognised. Profiling: pass
// --hub-deno-flag=--cpu-prof --hub-deno-flag=--cpu-prof-dir=DIR, then bench/cpuprofile_summary.ts.

import { dirname, resolve } from "node:path";
import { parseArgs } from "node:util";
import { ETCD_CLIENT_PORT, FIRST_APISERVER_PORT } from "../tests/kube/clusters.ts";
import { requireClusters } from "../tests/support/local_clusters.ts";
import { BenchCluster, type OkWatch } from "./_cluster.ts";
import { sleep } from "./_hub.ts";
import { buildPeer, type PeerBuild } from "./_peer.ts";
import { machine } from "./_proc.ts";
import {
  type Config,
  load1,
  log,
  objectNames,
  type OperatorKind,
  type Phase,
  PHASES,
  type Shape,
  SHAPES,
  startBenchHub,
  startOperator,
  withNamespace,
} from "./_run.ts";
import { percentile, round, summarize } from "./_stats.ts";
import { lineChart } from "./_svg.ts";
import { figure, type FigureInfo, json, markdown, type Row, shapeOf } from "./_report.ts";
import { mirrorPhase } from "./_mirror.ts";
import { backlogPhase, type Comparison, comparisonTable, kubectlPhase, type PhaseContext } from "./_user_phases.ts";
import { clustersPhase } from "./_clusters_phase.ts";
import { shardsPhase } from "./_shards_phase.ts";
import { bestCeiling, type Disturbance, type RunKind, steadyRun, type ThroughputRun } from "./_throughput.ts";

const ROOT = new URL("..", import.meta.url).pathname;

const USAGE = `Usage: deno task bench [options]
  --clusters N            clusters to use, from the running local ones (default 3)
  --objects M             objects per cluster in the throughput phase (default 1000)
  --concurrency C         hub --concurrency (default: the hub's own) and the ceiling's concurrent
                          status writes in the throughput phase (default 16)
  --create-concurrency K  concurrent creates per cluster, same for hub and ceiling (default C)
  --reps R                repetitions per figure, at least 3 for the report (default 3)
  --idle-objects K        objects per idle-latency repetition (default 20)
  --fairness-objects F    objects waiting in cluster A in the fairness phase (default 3000)
  --scale-objects S       objects per cluster in the memory/startup phase (default 10000)
  --phases a,b            subset of ${PHASES.join(",")} (default all); \`peer\` builds the kube-rs
                          peer (cargo, cached) and runs it beside the hub in the backlog, kubectl and idle phases
  --backlog-objects N     objects per cluster in the backlog phase, made by kubectl apply (default 500)
  --ceiling-concurrency L the ceiling's concurrency levels, best wins (default 16,64,256)
  --shapes a,b            CRD shapes of the backlog and kubectl phases: status,seed (default both)
  --hub-arg FLAG          extra flag for the hub, repeatable, e.g. --hub-arg=--qps=2000
  --hub-deno-flag FLAG    extra flag for the hub's \`deno run\`, repeatable, e.g. --hub-deno-flag=--cpu-prof
  --out FILE              JSON output (default bench/last.json; the SVG goes beside it)
  --quick                 smaller run: 300 objects, 600 waiting in fairness, 2000 per cluster at scale
  --help`;

function parseConfig(argv: string[]): Config {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: {
      clusters: { type: "string" },
      objects: { type: "string" },
      concurrency: { type: "string" },
      "create-concurrency": { type: "string" },
      reps: { type: "string" },
      "idle-objects": { type: "string" },
      "fairness-objects": { type: "string" },
      "scale-objects": { type: "string" },
      "backlog-objects": { type: "string" },
      "ceiling-concurrency": { type: "string" },
      shapes: { type: "string" },
      phases: { type: "string" },
      "hub-arg": { type: "string", multiple: true },
      "hub-deno-flag": { type: "string", multiple: true },
      out: { type: "string" },
      quick: { type: "boolean" },
      help: { type: "boolean" },
    },
  });
  if (values.help) {
    console.log(USAGE);
    Deno.exit(0);
  }
  const quick = values.quick === true;
  const int = (flag: string, fallback: number): number => {
    const raw = (values as Record<string, unknown>)[flag] as string | undefined;
    if (raw === undefined) return fallback;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < 1) {
      console.error(`bench: invalid --${flag} "${raw}": must be a positive whole number`);
      Deno.exit(2);
    }
    return n;
  };
  const concurrency = int("concurrency", 16);
  const phases = new Set<Phase>();
  for (const p of (values.phases ?? PHASES.join(",")).split(",").map((s) => s.trim()).filter(Boolean)) {
    if (!PHASES.includes(p as Phase)) {
      console.error(`bench: unknown phase "${p}": choose from ${PHASES.join(", ")}`);
      Deno.exit(2);
    }
    phases.add(p as Phase);
  }
  const levels = (values["ceiling-concurrency"] ?? "16,64,256").split(",").map((x) => Number(x.trim()));
  if (levels.some((l) => !Number.isInteger(l) || l < 1)) {
    console.error(`bench: invalid --ceiling-concurrency "${values["ceiling-concurrency"]}": positive whole numbers`);
    Deno.exit(2);
  }
  const shapes: Shape[] = [];
  for (const sh of (values.shapes ?? SHAPES.join(",")).split(",").map((x) => x.trim()).filter(Boolean)) {
    if (!SHAPES.includes(sh as Shape)) {
      console.error(`bench: unknown shape "${sh}": choose from ${SHAPES.join(", ")}`);
      Deno.exit(2);
    }
    shapes.push(sh as Shape);
  }
  const out = resolve(values.out ?? `${ROOT}bench/last.json`);
  return {
    clusters: int("clusters", 3),
    objects: int("objects", quick ? 300 : 1000),
    concurrency,
    createConcurrency: int("create-concurrency", concurrency),
    reps: int("reps", 3),
    idleObjects: int("idle-objects", 20),
    fairnessObjects: int("fairness-objects", quick ? 600 : 3000),
    scaleObjects: int("scale-objects", quick ? 2000 : 10_000),
    phases,
    hubArgs: values["hub-arg"] ?? [],
    denoFlags: values["hub-deno-flag"] ?? [],
    out,
    svg: out.replace(/\.json$/, "") + ".svg",
    quick,
    backlogObjects: int("backlog-objects", quick ? 200 : 500),
    ceilingConcurrencies: [...new Set(levels)],
    shapes,
    // The hub's own default (it scales with the clusters) unless --concurrency is given.
    hubDefaultConcurrency: values.concurrency === undefined,
  };
}

// ------------------------------------------------------------------------------------------------

/** Ensures the local clusters run (starting them if needed) and returns the first `n` names. */
async function ensureClusters(n: number): Promise<string[]> {
  let names: string[];
  try {
    names = requireClusters().names;
  } catch (err) {
    // Never start clusters over somebody else's: another checkout's apiservers may hold the ports.
    const ports = [FIRST_APISERVER_PORT, FIRST_APISERVER_PORT + 1, FIRST_APISERVER_PORT + 2, ETCD_CLIENT_PORT];
    const busy = ports.filter((port) => portInUse(port));
    if (busy.length > 0) {
      throw new Error(
        `the local clusters of this checkout are not running, but ports ${busy.join(", ")} are in use ` +
          `(another checkout's clusters? set OPERATOR_HUB_PORT_OFFSET); not starting clusters over them`,
        { cause: err },
      );
    }
    console.error("bench: starting the local clusters (deno task clusters:up)...");
    const out = await new Deno.Command(Deno.execPath(), { args: ["task", "clusters:up"], cwd: ROOT }).output();
    if (out.code !== 0) throw new Error("deno task clusters:up failed");
    names = requireClusters().names;
  }
  const foreign = foreignControlPlanes();
  if (foreign.length > 0) {
    console.error(
      `bench: warning: other control planes run on this machine (${foreign.join(", ")}); CPU figures are noisier`,
    );
  }
  if (n > names.length) {
    throw new Error(`--clusters ${n}: only ${names.length} local clusters run (${names.join(", ")})`);
  }
  return names.slice(0, n);
}

/** Executables of kube-apiserver, kube-controller-manager or etcd processes that do not belong to this checkout. */
function foreignControlPlanes(): string[] {
  const found = new Set<string>();
  for (const e of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(e.name)) continue;
    try {
      const exe = Deno.readLinkSync(`/proc/${e.name}/exe`);
      if (/\/(kube-apiserver|kube-controller-manager|etcd)( \(deleted\))?$/.test(exe) && !exe.startsWith(ROOT)) {
        found.add(exe);
      }
    } catch { /* gone, or not ours to read */ }
  }
  return [...found];
}

function portInUse(port: number): boolean {
  try {
    Deno.listen({ hostname: "127.0.0.1", port }).close();
    return false;
  } catch {
    return true;
  }
}

// ------------------------------------------------------------------------------------------------
// Idle latency

/** `reps` repetitions of single creates on an idle hub or peer (one start); latency create → Ok per object. */
async function idlePhase(
  cfg: Config,
  names: string[],
  cl: BenchCluster[],
  kind: OperatorKind,
  repCount: number,
  peerBinary?: string,
): Promise<number[][]> {
  return await withNamespace(cl, `idle-${kind}`, async (ns) => {
    const watches = await Promise.all(cl.map((c) => c.watchOk(ns)));
    const op = startOperator(kind, cfg, names, ns, peerBinary, cl[0].statusSubresource);
    try {
      await op.waitReady();
      await sleep(1000);
      const reps: number[][] = [];
      for (let r = 0; r < repCount; r++) {
        const lat: number[] = [];
        for (let j = 0; j < cfg.idleObjects; j++) {
          const i = j % cl.length;
          const name = `idle-${r}-${String(j).padStart(4, "0")}`;
          const t = performance.now();
          await cl[i].create(ns, name);
          lat.push((await watches[i].waitName(name, 30_000)) - t);
          await sleep(100);
        }
        reps.push(lat);
        log(`idle ${kind}: p50 ${round(percentile(lat, 50), 1)} ms, p99 ${round(percentile(lat, 99), 1)} ms`);
        await sleep(500);
      }
      return reps;
    } finally {
      await op.stop();
      await Promise.all(watches.map((w) => w.stop()));
    }
  });
}

// ------------------------------------------------------------------------------------------------
// Fairness

interface FairnessRun {
  waitMs: number;
  drainMs: number;
  pctOfDrain: number;
  aLeftWhenBDone: number;
}

async function fairnessRun(cfg: Config, names: string[], cl: BenchCluster[]): Promise<FairnessRun> {
  const [a, b] = cl;
  return await withNamespace(cl, "fair", async (ns) => {
    await a.createMany(ns, objectNames("a-", cfg.fairnessObjects), 32);
    const [wa, wb] = await Promise.all([a.watchOk(ns), b.watchOk(ns)]);
    const hub = startBenchHub(cfg, names, ns);
    try {
      await wa.waitCount(1, 60_000);
      const t = performance.now();
      await b.create(ns, "b-lonely");
      const seenB = await wb.waitName("b-lonely", 60_000);
      const aLeft = cfg.fairnessObjects - [...wa.seen.values()].filter((at) => at <= seenB).length;
      await wa.waitCount(cfg.fairnessObjects, 300_000);
      const times = [...wa.seen.values()].sort((x, y) => x - y);
      const drainMs = times[times.length - 1] - times[0];
      const waitMs = seenB - t;
      return { waitMs, drainMs, pctOfDrain: 100 * waitMs / drainMs, aLeftWhenBDone: aLeft };
    } finally {
      await hub.stop();
      await Promise.all([wa.stop(), wb.stop()]);
    }
  });
}

// ------------------------------------------------------------------------------------------------
// Scale: memory and startup with S objects per cluster

interface ScaleResult {
  createSeconds: number;
  firstStart: { readySeconds: number; drainSeconds: number; objectsPerSecond: number; peakRssMb: number };
  runs: { readySeconds: number; idleSeconds: number; rssMb: number; peakRssMb: number; cpuMs: number }[];
}

async function scalePhase(cfg: Config, names: string[], cl: BenchCluster[]): Promise<ScaleResult> {
  const S = cfg.scaleObjects;
  return await withNamespace(cl, "scale", async (ns) => {
    const t0 = performance.now();
    await Promise.all(cl.map((c) => c.createMany(ns, objectNames("s-", S), 32)));
    const createSeconds = (performance.now() - t0) / 1000;
    log(`scale: created ${S * cl.length} objects in ${round(createSeconds, 1)} s`);

    // First start: every object still needs its one status write.
    const watches: OkWatch[] = await Promise.all(cl.map((c) => c.watchOk(ns)));
    let first: ScaleResult["firstStart"];
    {
      const hub = startBenchHub(cfg, names, ns);
      try {
        const readySeconds = await hub.waitReady();
        const readyAt = performance.now();
        await Promise.all(watches.map((w) => w.waitCount(S, 600_000)));
        const drainSeconds = (performance.now() - readyAt) / 1000;
        await hub.waitIdle(400);
        first = {
          readySeconds,
          drainSeconds,
          objectsPerSecond: S * cl.length / drainSeconds,
          peakRssMb: hub.memory().peak,
        };
        log(
          `scale: first start ready in ${round(readySeconds, 2)} s, ${S * cl.length} writes in ${
            round(drainSeconds, 1)
          } s, peak RSS ${round(first.peakRssMb, 1)} MB`,
        );
      } finally {
        await hub.stop();
        await Promise.all(watches.map((w) => w.stop()));
      }
    }

    // Restarts: every object already has its UUID (the steady state of a hub pod restart).
    const runs: ScaleResult["runs"] = [];
    for (let r = 0; r < cfg.reps; r++) {
      await sleep(1000);
      const hub = startBenchHub(cfg, names, ns);
      try {
        const readySeconds = await hub.waitReady();
        await hub.waitIdle(500);
        const idleSeconds = (performance.now() - hub.spawnedAt) / 1000;
        await sleep(1000);
        const m = hub.memory();
        runs.push({ readySeconds, idleSeconds, rssMb: m.rss, peakRssMb: m.peak, cpuMs: hub.cpuMs() });
        log(
          `scale rep ${r + 1}: ready ${round(readySeconds, 2)} s, idle ${round(idleSeconds, 2)} s, RSS ${
            round(m.rss, 1)
          } MB, peak ${round(m.peak, 1)} MB`,
        );
      } finally {
        await hub.stop();
      }
    }
    return { createSeconds, firstStart: first, runs };
  });
}

// ------------------------------------------------------------------------------------------------
// Report

async function main(): Promise<void> {
  const cfg = parseConfig(Deno.args);
  const started = performance.now();
  const startedAt = new Date().toISOString();
  const names = await ensureClusters(cfg.clusters);
  const cl = names.map((n) => new BenchCluster(n));
  await Promise.all(cl.map((c) => c.detect()));
  const host = machine();
  log(
    `clusters ${
      names.join(", ")
    }; ${cfg.objects} objects per cluster; concurrency ${cfg.concurrency}; ${cfg.reps} reps; load ${
      (host.load_average as number[]).map((l) => l.toFixed(2)).join(" ")
    }`,
  );

  const rows: Row[] = [];
  const out: Record<string, unknown> = {
    started_at: startedAt,
    command: `deno task bench ${Deno.args.join(" ")}`.trim(),
    machine: host,
    config: {
      clusters: names,
      objects_per_cluster: cfg.objects,
      concurrency: cfg.concurrency,
      create_concurrency_per_cluster: cfg.createConcurrency,
      reps: cfg.reps,
      idle_objects_per_rep: cfg.idleObjects,
      fairness_objects: cfg.fairnessObjects,
      scale_objects_per_cluster: cfg.scaleObjects,
      hub_args: cfg.hubArgs,
      hub_deno_flags: cfg.denoFlags,
      backlog_objects_per_cluster: cfg.backlogObjects,
      ceiling_concurrency_levels: cfg.ceilingConcurrencies,
      shapes: cfg.shapes,
      status_subresource: Object.fromEntries(cl.map((c) => [c.name, c.statusSubresource])),
    },
  };
  let svg: string | undefined;
  const disturbed: Disturbance[] = [];
  out.disturbed_runs_repeated = disturbed;
  const figures: Record<string, FigureInfo> = {};
  out.figures = figures;
  const comparisons: Comparison[] = [];
  out.comparisons = comparisons;
  // The peer is built before any phase runs, so a build failure is known (and reported) up front.
  let peer: PeerBuild | undefined;
  if (cfg.phases.has("peer")) {
    peer = await buildPeer(log);
    if (peer.ok) log(`peer: built in ${round(peer.buildSeconds, 1)} s`);
    else log(`peer: NOT BUILT, its figures are n/a: ${peer.error}`);
    out.peer_kube_rs = peer.ok
      ? { built: true, build_seconds: round(peer.buildSeconds, 1), binary: peer.binary }
      : { built: false, error: peer.error };
  }
  const bin = peer?.ok ? peer.binary : undefined;
  // The JSON so far, after every phase: a long run that dies late still leaves what it measured.
  const flush = async () => {
    await Deno.mkdir(dirname(cfg.out), { recursive: true });
    await Deno.writeTextFile(cfg.out, JSON.stringify({ ...out, partial: true }, null, 2) + "\n");
  };
  const ctx: PhaseContext = { cfg, names, cl, peer, disturbed, rows, out, figures, comparisons };

  try {
    if (cfg.phases.has("throughput")) {
      const hubRuns: ThroughputRun[] = [];
      const ceilRuns: ThroughputRun[] = [];
      const watchRuns: ThroughputRun[] = [];
      const ceilingWon: number[] = [];
      const ceilingLevels: { concurrency: number; objectsPerSecond: number }[][] = [];
      const orders: RunKind[][] = [
        ["ceiling", "hub", "ceiling+watch"],
        ["hub", "ceiling+watch", "ceiling"],
        ["ceiling+watch", "ceiling", "hub"],
      ];
      for (let r = 0; r < cfg.reps; r++) {
        for (const kind of orders[r % orders.length]) {
          let run: ThroughputRun;
          if (kind === "ceiling") {
            const c = await bestCeiling(cfg, names, cl, {}, "throughput", disturbed);
            run = c.best;
            ceilingWon.push(c.best.concurrency);
            ceilingLevels.push(c.levels);
          } else {
            run = await steadyRun(kind, cfg, names, cl, {}, "throughput", disturbed);
          }
          (kind === "hub" ? hubRuns : kind === "ceiling" ? ceilRuns : watchRuns).push(run);
          log(
            `throughput rep ${r + 1} ${kind}: ${round(run.objectsPerSecond, 0)} obj/s, p50 ${
              round(run.latencyMs.p50, 0)
            } ms, writes/obj ${round(run.writesPerObject, 3)}, ${round(run.seconds, 1)} s, machine busy ${
              round(run.machineBusyPct, 0)
            }% (other ${round(run.otherCpuPct, 0)}%)` +
              (run.hubCpuMsPerReconcile !== undefined
                ? `, hub ${
                  round(run.hubCpuMsPerReconcile, 3)
                } ms CPU/reconcile, ${run.hubReconciles} reconciles, ${run.hubPatches} PATCH, ${run.hubReconnects} reconnects, apiservers ${
                  round(run.infraCpuMsPerObject, 2)
                } ms CPU/object`
                : "") +
              (run.missing ? `, ${run.missing} MISSING` : ""),
          );
        }
      }
      const S = (f: (r: ThroughputRun) => number, runs = hubRuns) => summarize(runs.map(f));
      const ratio = summarize(hubRuns.map((h, i) => h.objectsPerSecond / ceilRuns[i].objectsPerSecond));
      const ratioWatch = summarize(hubRuns.map((h, i) => h.objectsPerSecond / watchRuns[i].objectsPerSecond));
      const hubOps = S((r) => r.objectsPerSecond);
      const ceilOps = S((r) => r.objectsPerSecond, ceilRuns);
      const cpuRec = S((r) => r.hubCpuMsPerReconcile!);
      const writes = S((r) => r.writesPerObject);
      const peak = S((r) => r.hubPeakRssMb!);
      rows.push(
        { key: "objects_per_second", label: "objects_per_second (hub)", s: hubOps, unit: "/s", digits: 0 },
        { key: "ceiling_objects_per_second", label: "ceiling_objects_per_second", s: ceilOps, unit: "/s", digits: 0 },
        {
          key: "ratio_to_ceiling",
          label: "ratio_to_ceiling",
          s: ratio,
          unit: "",
          target: "≥ 0.8",
          met: ratio.median >= 0.8,
        },
        {
          key: "ceiling_with_watch",
          label: "ceiling with one more watch stream (what an operator's watch costs the apiservers)",
          s: S((r) => r.objectsPerSecond, watchRuns),
          unit: "/s",
          digits: 0,
        },
        {
          key: "ratio_to_ceiling_with_watch",
          label: "ratio to the ceiling with watch",
          s: ratioWatch,
          unit: "",
          digits: 2,
        },
        {
          key: "latency_p50",
          label: "latency_ms p50 (under load)",
          s: S((r) => r.latencyMs.p50),
          unit: "ms",
          digits: 0,
        },
        {
          key: "latency_p95",
          label: "latency_ms p95 (under load)",
          s: S((r) => r.latencyMs.p95),
          unit: "ms",
          digits: 0,
        },
        {
          key: "latency_p99",
          label: "latency_ms p99 (under load)",
          s: S((r) => r.latencyMs.p99),
          unit: "ms",
          digits: 0,
        },
        {
          key: "hub_cpu_ms_per_reconcile",
          label: "hub_cpu_ms_per_reconcile",
          s: cpuRec,
          unit: "ms",
          target: "≤ 0.3",
          met: cpuRec.median <= 0.3,
          digits: 3,
        },
        {
          key: "hub_cpu_ms_per_object",
          label: "hub_cpu_ms_per_object",
          s: S((r) => r.hubCpuMsPerObject!),
          unit: "ms",
          digits: 3,
        },
        {
          key: "reconciles_per_object",
          label: "reconciles_per_object",
          s: S((r) => r.hubReconciles! / r.objects),
          unit: "",
          digits: 2,
        },
        {
          key: "writes_per_object",
          label: "writes_per_object (apiserver)",
          s: writes,
          unit: "",
          target: "1.00",
          met: Math.abs(writes.median - 1) < 0.005,
          digits: 3,
        },
        { key: "peak_rss_mb", label: "peak_rss_mb", s: peak, unit: "MB", digits: 1 },
        {
          key: "minimal_client_cpu_ms_per_write",
          label: "minimal Deno client CPU per status write (ceiling − hub run, bench process)",
          s: summarize(ceilRuns.map((c, i) => c.benchCpuMsPerObject - hubRuns[i].benchCpuMsPerObject)),
          unit: "ms",
          digits: 3,
        },
        {
          key: "apiserver_cpu_ms_per_object",
          label: "apiservers+etcd CPU per object (ceiling / hub)",
          s: summarize(ceilRuns.map((c, i) => c.infraCpuMsPerObject / hubRuns[i].infraCpuMsPerObject)),
          unit: "ratio",
          digits: 2,
        },
      );
      out.objects_per_second = json(hubOps, 1);
      out.ceiling_objects_per_second = json(ceilOps, 1);
      out.ratio_to_ceiling = json(ratio);
      out.ceiling_concurrency_won = ceilingWon;
      out.ceiling_levels = ceilingLevels;
      figures.ratio_to_ceiling = figure({
        objects: cfg.objects,
        creation: "plain",
        shape: shapeOf(cl),
        startup: false,
        ceiling: ceilingWon,
        runs: [...hubRuns, ...ceilRuns],
      });
      figures.hub_cpu_ms_per_reconcile = figures.ratio_to_ceiling;
      out.ceiling_with_watch_objects_per_second = json(S((r) => r.objectsPerSecond, watchRuns), 1);
      out.ratio_to_ceiling_with_watch = json(ratioWatch);
      out.latency_ms = {
        p50: json(S((r) => r.latencyMs.p50), 1),
        p95: json(S((r) => r.latencyMs.p95), 1),
        p99: json(S((r) => r.latencyMs.p99), 1),
      };
      out.hub_cpu_ms_per_reconcile = json(cpuRec, 4);
      out.hub_cpu_ms_per_object = json(S((r) => r.hubCpuMsPerObject!), 4);
      out.writes_per_object = json(writes, 4);
      out.peak_rss_mb = json(peak, 1);
      const strip = (r: ThroughputRun) => ({ ...r, series: undefined });
      out.throughput_runs = {
        hub: hubRuns.map(strip),
        ceiling: ceilRuns.map(strip),
        ceiling_with_watch: watchRuns.map(strip),
      };
      // Chart: the repetition whose hub figure is the median, with its paired ceiling run.
      const order = hubRuns.map((r, i) => [r.objectsPerSecond, i] as const).sort((a, b) => a[0] - b[0]);
      const mid = order[order.length >> 1][1];
      svg = lineChart(
        `Objects to status Ok: hub ${round(hubRuns[mid].objectsPerSecond, 0)}/s vs ceiling ${
          round(ceilRuns[mid].objectsPerSecond, 0)
        }/s (${names.length} clusters × ${cfg.objects})`,
        [
          {
            label: `ceiling (direct create + status write, concurrency ${ceilRuns[mid].concurrency}, best of ${
              cfg.ceilingConcurrencies.join("/")
            })`,
            color: "#9ca3af",
            points: ceilRuns[mid].series,
          },
          { label: "ceiling + one more watch stream", color: "#d97706", points: watchRuns[mid].series },
          {
            label: `operator-hub (watch → queue → reconcile, --concurrency ${cfg.concurrency})`,
            color: "#2563eb",
            points: hubRuns[mid].series,
          },
        ],
        `${host.cpus} × ${host.cpu_model}, ${host.memory_gb} GB; ${names.length} kube-apiservers + etcd on the same machine; Deno ${Deno.version.deno}; ${
          startedAt.slice(0, 16)
        }Z`,
      );
      out.chart_series = {
        hub: thinSeries(hubRuns[mid].series),
        ceiling: thinSeries(ceilRuns[mid].series),
        ceiling_with_watch: thinSeries(watchRuns[mid].series),
      };
    }

    await flush();
    if (cfg.phases.has("idle")) {
      const reps: number[][] = [];
      const peerReps: number[][] = [];
      const loads: { load1: number }[] = [];
      for (let r = 0; r < cfg.reps; r++) {
        // Alternating which goes first; the peer only when the peer phase is on and it built.
        const kinds: OperatorKind[] = bin ? (r % 2 ? ["peer", "hub"] : ["hub", "peer"]) : ["hub"];
        for (const kind of kinds) {
          loads.push({ load1: load1() });
          (kind === "hub" ? reps : peerReps).push(...await idlePhase(cfg, names, cl, kind, 1, bin));
        }
      }
      const p50 = summarize(reps.map((l) => percentile(l, 50)));
      if (bin) {
        const peerP50 = summarize(peerReps.map((l) => percentile(l, 50)));
        const ratio = summarize(reps.map((l, i) => percentile(l, 50) / percentile(peerReps[i], 50)));
        rows.push(
          { key: "peer_idle_p50", label: "kube-rs peer idle_latency_ms p50", s: peerP50, unit: "ms", digits: 1 },
          {
            key: "peer_kube_rs_idle_latency_ratio",
            label: "idle latency p50, hub over kube-rs peer",
            s: ratio,
            unit: "",
            target: "≤ 1.0",
            met: ratio.median <= 1,
          },
        );
        out.peer_kube_rs_idle_latency_ms = {
          p50: json(peerP50, 2),
          all: peerReps.map((l) => l.map((v) => round(v, 2))),
        };
        out.peer_kube_rs_idle_latency_ratio = json(ratio);
      }
      figures.idle_latency_ms = figures.peer_kube_rs_idle_latency_ratio = figure({
        objects: cfg.idleObjects,
        creation: "plain",
        shape: shapeOf(cl),
        startup: false,
        runs: loads,
      });
      const p99 = summarize(reps.map((l) => percentile(l, 99)));
      rows.push(
        {
          key: "idle_p50",
          label: "idle_latency_ms p50",
          s: p50,
          unit: "ms",
          target: "≤ 25",
          met: p50.median <= 25,
          digits: 1,
        },
        { key: "idle_p99", label: "idle_latency_ms p99", s: p99, unit: "ms", digits: 1 },
      );
      out.idle_latency_ms = { p50: json(p50, 2), p99: json(p99, 2), all: reps.map((l) => l.map((v) => round(v, 2))) };
    }

    await flush();
    if (cfg.phases.has("fairness")) {
      if (cl.length < 2) {
        log("fairness: skipped, needs at least 2 clusters");
      } else {
        const runs: FairnessRun[] = [];
        for (let r = 0; r < cfg.reps; r++) {
          const run = await fairnessRun(cfg, names, cl);
          runs.push(run);
          log(
            `fairness rep ${r + 1}: B waited ${round(run.waitMs, 1)} ms while A drained ${cfg.fairnessObjects} in ${
              round(run.drainMs, 0)
            } ms (${round(run.pctOfDrain, 2)}%), ${run.aLeftWhenBDone} of A still pending`,
          );
        }
        const wait = summarize(runs.map((r) => r.waitMs));
        const pct = summarize(runs.map((r) => r.pctOfDrain));
        rows.push(
          {
            key: "fairness_wait_ms",
            label: `fairness_wait_ms (B, while A drains ${cfg.fairnessObjects})`,
            s: wait,
            unit: "ms",
            digits: 1,
          },
          {
            key: "fairness_pct",
            label: "fairness wait as % of A's drain",
            s: pct,
            unit: "%",
            target: "≤ 5%",
            met: pct.median <= 5,
            digits: 2,
          },
          {
            key: "fairness_drain",
            label: "A's drain time",
            s: summarize(runs.map((r) => r.drainMs)),
            unit: "ms",
            digits: 0,
          },
        );
        out.fairness_wait_ms = json(wait, 2);
        out.fairness_pct_of_drain = json(pct, 3);
        out.fairness_runs = runs;
      }
    }

    await flush();
    if (cfg.phases.has("scale")) {
      const res = await scalePhase(cfg, names, cl);
      const ready = summarize(res.runs.map((r) => r.readySeconds));
      const peak = summarize(res.runs.map((r) => r.peakRssMb));
      const rss = summarize(res.runs.map((r) => r.rssMb));
      const label = `${names.length} × ${cfg.scaleObjects}`;
      rows.push(
        {
          key: "rss_mb_at_10k_per_cluster",
          label: `rss_mb_at_10k_per_cluster (peak, ${label})`,
          s: peak,
          unit: "MB",
          target: "≤ 100",
          met: peak.median <= 100,
          digits: 1,
        },
        { key: "rss_steady", label: `RSS after sync, steady (${label})`, s: rss, unit: "MB", digits: 1 },
        {
          key: "startup_to_ready_seconds",
          label: `startup_to_ready_seconds (${label})`,
          s: ready,
          unit: "s",
          target: "≤ 5",
          met: ready.median <= 5,
          digits: 2,
        },
        {
          key: "restart_to_idle",
          label: `restart to queue drained (${label})`,
          s: summarize(res.runs.map((r) => r.idleSeconds)),
          unit: "s",
          digits: 2,
        },
      );
      out.rss_mb_at_10k_per_cluster = json(peak, 1);
      out.rss_steady_mb_at_10k_per_cluster = json(rss, 1);
      out.startup_to_ready_seconds = json(ready, 3);
      out.scale = res;
      out.rss_mb_first_start_peak = round(res.firstStart.peakRssMb, 1);
      figures.rss_mb_first_start_peak = figures.rss_mb_at_10k_per_cluster = figure({
        objects: cfg.scaleObjects,
        creation: "plain",
        shape: shapeOf(cl),
        startup: true,
        runs: [{ load1: load1() }],
      });
      rows.push({
        key: "rss_mb_first_start_peak",
        label: `rss_mb_first_start_peak (first start writing all ${names.length} × ${cfg.scaleObjects} UUIDs)`,
        s: summarize([res.firstStart.peakRssMb]),
        unit: "MB",
        target: "≤ 100",
        met: res.firstStart.peakRssMb <= 100,
        digits: 1,
      });
    }

    await flush();
    if (cfg.phases.has("backlog")) await backlogPhase(ctx);
    await flush();
    if (cfg.phases.has("kubectl")) await kubectlPhase(ctx);
    await flush();
    if (cfg.phases.has("clusters")) await clustersPhase(ctx);
    if (cfg.phases.has("mirror")) await mirrorPhase(ctx);
    if (cfg.phases.has("shards")) await shardsPhase(ctx);
  } finally {
    cl.forEach((c) => c.close());
  }

  out.duration_seconds = round((performance.now() - started) / 1000, 1);
  out.table = rows.map((r) => ({ figure: r.key, ...json(r.s, 4), target: r.target, met: r.met }));
  const table = markdown(rows);
  console.log(`\n${table}\n`);
  if (comparisons.length) {
    console.log(`${comparisonTable(comparisons)}\n`);
  }
  console.log(
    `${names.length} clusters, ${cfg.objects} objects each, concurrency ${cfg.concurrency}, ${cfg.reps} repetitions; ` +
      `${host.cpus} × ${host.cpu_model}; took ${out.duration_seconds} s.`,
  );
  await Deno.mkdir(dirname(cfg.out), { recursive: true });
  await Deno.writeTextFile(cfg.out, JSON.stringify(out, null, 2) + "\n");
  if (svg) await Deno.writeTextFile(cfg.svg, svg);
  console.log(`wrote ${cfg.out}${svg ? ` and ${cfg.svg}` : ""}`);
}

function thinSeries(points: [number, number][], n = 200): [number, number][] {
  if (points.length <= n) return points.map(([t, c]) => [round(t, 3), c]);
  const step = points.length / n;
  const out: [number, number][] = [];
  for (let i = 0; i < n; i++) {
    const [t, c] = points[Math.floor(i * step)];
    out.push([round(t, 3), c]);
  }
  const [t, c] = points[points.length - 1];
  out.push([round(t, 3), c]);
  return out;
}

if (import.meta.main) {
  await main();
}

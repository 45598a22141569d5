// A/B of two hub builds (or two flag sets) on the same backlog in the same run: `deno run -A bench/tools/ab.ts`.
//
// Each repetition gives every variant (two, or three with --c) an empty start and a fresh `kubectl apply` backlog (bench/lib/backlog.ts),
// alternating which goes first; the report gives medians of hub CPU per object net of the empty start, seconds from
// process start to drained, peak RSS and writes per object, and B over A. On a shared, noisy machine judge a change
// by these same-run ratios of process CPU time, never by wall time alone.
//
// A baseline is any checkout of the hub, e.g. `git archive HEAD | tar -x -C .cache/ab-base` (then
// `--a .cache/ab-base/src/cli/main.ts`); entries are relative to the repository root.

import { parseArgs } from "node:util";
import { requireClusters } from "../../dev/support/local_clusters.ts";
import { type BacklogRun, backlogRun } from "../lib/backlog.ts";
import { BenchCluster } from "../lib/cluster.ts";
import { shapeOf } from "../lib/report.ts";
import { type Disturbance, steadyRun, type ThroughputRun } from "../lib/throughput_run.ts";
import { type Config, load1, log, setShape, type Shape, SHAPES } from "../lib/run.ts";
import { round, summarize, type Summary } from "../lib/stats.ts";

const USAGE = `Usage: deno run -A bench/tools/ab.ts [options]
  --a ENTRY          variant A's script, relative to the repository root (default src/cli/main.ts)
  --b ENTRY          variant B's script (default src/cli/main.ts)
  --c ENTRY          an optional third variant C's script (e.g. --c src/cli/main.ts --c-arg=--operators=uuid)
  --a-arg FLAG       extra hub flag for A, repeatable (e.g. --a-arg=--qps=5000); --b-arg, --c-arg likewise
  --arg FLAG         extra hub flag for every variant, repeatable
  --deno-flag FLAG   extra \`deno run\` flag for all, repeatable; --a-deno-flag, --b-deno-flag, --c-deno-flag for one
  --phase P          backlog (default: kubectl-applied objects made while no hub runs, then the hub started) or
                     throughput (objects created while the hub runs, as \`deno task bench --phases throughput\`)
  --objects N        objects per cluster (default 500; made by kubectl apply in the backlog phase)
  --out FILE         the JSON report (default bench/last_ab.json)
  --reps R           repetitions (default 3)
  --shapes a,b       CRD shapes: status,seed (default status)
  --clusters N       local clusters to use (default 3)
  --concurrency C    the hub's --concurrency (default: the hub's own default)`;

interface Variant {
  label: "A" | "B" | "C";
  entry: string;
  args: string[];
  denoFlags: string[];
}

function parse(): {
  phase: "backlog" | "throughput";
  out: string | undefined;
  variants: Variant[];
  objects: number;
  reps: number;
  shapes: Shape[];
  clusters: number;
  cfg: Config;
} {
  const { values } = parseArgs({
    args: Deno.args,
    strict: true,
    options: {
      a: { type: "string" },
      b: { type: "string" },
      c: { type: "string" },
      arg: { type: "string", multiple: true },
      "a-arg": { type: "string", multiple: true },
      "b-arg": { type: "string", multiple: true },
      "c-arg": { type: "string", multiple: true },
      "deno-flag": { type: "string", multiple: true },
      "a-deno-flag": { type: "string", multiple: true },
      "b-deno-flag": { type: "string", multiple: true },
      "c-deno-flag": { type: "string", multiple: true },
      objects: { type: "string" },
      phase: { type: "string" },
      out: { type: "string" },
      reps: { type: "string" },
      shapes: { type: "string" },
      clusters: { type: "string" },
      concurrency: { type: "string" },
      help: { type: "boolean" },
    },
  });
  if (values.help) {
    console.log(USAGE);
    Deno.exit(0);
  }
  const int = (raw: string | undefined, flag: string, fallback: number): number => {
    if (raw === undefined) return fallback;
    const n = Number(raw);
    if (!Number.isInteger(n) || n < 1) {
      console.error(`ab: invalid --${flag} "${raw}": must be a positive whole number`);
      Deno.exit(2);
    }
    return n;
  };
  const shapes: Shape[] = [];
  for (const sh of (values.shapes ?? "status").split(",").map((s) => s.trim()).filter(Boolean)) {
    if (!SHAPES.includes(sh as Shape)) {
      console.error(`ab: unknown shape "${sh}": choose from ${SHAPES.join(", ")}`);
      Deno.exit(2);
    }
    shapes.push(sh as Shape);
  }
  const objects = int(values.objects, "objects", 500);
  const phase = values.phase ?? "backlog";
  if (phase !== "backlog" && phase !== "throughput") {
    console.error(`ab: unknown --phase "${phase}": choose from backlog, throughput`);
    Deno.exit(2);
  }
  const concurrency = values.concurrency === undefined ? [] : ["--concurrency", values.concurrency];
  const argsOf = (extra: string[] | undefined) => [...concurrency, ...(values.arg ?? []), ...(extra ?? [])];
  const cfg: Config = {
    clusters: int(values.clusters, "clusters", 3),
    objects,
    concurrency: 16,
    createConcurrency: 16,
    reps: int(values.reps, "reps", 3),
    idleObjects: 0,
    fairnessObjects: 0,
    scaleObjects: 0,
    phases: new Set(),
    hubArgs: [],
    denoFlags: values["deno-flag"] ?? [],
    out: "",
    svg: "",
    quick: false,
    backlogObjects: objects,
    ceilingConcurrencies: [],
    shapes,
    hubDefaultConcurrency: true,
  };
  const variants: Variant[] = [
    {
      label: "A",
      entry: values.a ?? "src/cli/main.ts",
      args: argsOf(values["a-arg"]),
      denoFlags: values["a-deno-flag"] ?? [],
    },
    {
      label: "B",
      entry: values.b ?? "src/cli/main.ts",
      args: argsOf(values["b-arg"]),
      denoFlags: values["b-deno-flag"] ?? [],
    },
  ];
  if (values.c !== undefined || values["c-arg"] || values["c-deno-flag"]) {
    variants.push({
      label: "C",
      entry: values.c ?? "src/cli/main.ts",
      args: argsOf(values["c-arg"]),
      denoFlags: values["c-deno-flag"] ?? [],
    });
  }
  return {
    phase,
    out: values.out,
    variants,
    objects,
    reps: cfg.reps,
    shapes,
    clusters: cfg.clusters,
    cfg,
  };
}

interface Figures {
  cpuMsPerObject: Summary;
  emptyCpuMs: Summary;
  seconds: Summary;
  peakRssMb: Summary;
  emptyPeakRssMb: Summary;
  writesPerObject: Summary;
}

function figures(empty: BacklogRun[], full: BacklogRun[]): Figures {
  const base = summarize(empty.map((r) => r.cpuMs ?? NaN)).median;
  return {
    cpuMsPerObject: summarize(full.map((r) => ((r.cpuMs ?? NaN) - base) / r.objects)),
    emptyCpuMs: summarize(empty.map((r) => r.cpuMs ?? NaN)),
    seconds: summarize(full.map((r) => r.seconds)),
    peakRssMb: summarize(full.map((r) => r.peakRssMb ?? NaN)),
    emptyPeakRssMb: summarize(empty.map((r) => r.peakRssMb ?? NaN)),
    writesPerObject: summarize(full.map((r) => r.writesPerObject)),
  };
}

/** The throughput phase's figures: hub CPU per reconcile is `hub_cpu_ms_per_reconcile` of `deno task bench`. */
interface ThroughputFigures {
  cpuMsPerReconcile: Summary;
  cpuMsPerObject: Summary;
  objectsPerSecond: Summary;
  seconds: Summary;
  peakRssMb: Summary;
  writesPerObject: Summary;
}

function throughputFigures(runs: ThroughputRun[]): ThroughputFigures {
  return {
    cpuMsPerReconcile: summarize(runs.map((r) => r.hubCpuMsPerReconcile ?? NaN)),
    cpuMsPerObject: summarize(runs.map((r) => r.hubCpuMsPerObject ?? NaN)),
    objectsPerSecond: summarize(runs.map((r) => r.objectsPerSecond)),
    seconds: summarize(runs.map((r) => r.seconds)),
    peakRssMb: summarize(runs.map((r) => r.peakRssMb ?? NaN)),
    writesPerObject: summarize(runs.map((r) => r.writesPerObject)),
  };
}

function fmt(s: Summary, digits = 3): string {
  return `${round(s.median, digits)} (${round(s.min, digits)}–${round(s.max, digits)})`;
}

async function main(): Promise<void> {
  const { phase, out: outFlag, variants, reps, shapes, clusters, cfg } = parse();
  const names = requireClusters().names.slice(0, clusters);
  const cl = names.map((n) => new BenchCluster(n));
  await Promise.all(cl.map((c) => c.detect()));
  const original = shapeOf(cl);
  const report: Record<string, unknown> = { phase, variants, objects: cfg.backlogObjects, clusters: names, reps };
  try {
    for (const shape of shapes) {
      await setShape(cl, shape);
      const loads: number[] = [];
      const backlog = new Map(variants.map((v) => [v.label, { empty: [] as BacklogRun[], full: [] as BacklogRun[] }]));
      const throughput = new Map(variants.map((v) => [v.label, [] as ThroughputRun[]]));
      const disturbed: Disturbance[] = [];
      for (let rep = 0; rep < reps; rep++) {
        // Alternating: each repetition starts with the next variant and runs them in turn (A B, B A, … for two).
        const order = variants.map((_, i) => variants[(i + rep) % variants.length]);
        for (const empty of phase === "backlog" ? [true, false] : [false]) {
          for (const v of order) {
            const vcfg: Config = {
              ...cfg,
              hubEntry: v.entry,
              hubArgs: v.args,
              denoFlags: [...cfg.denoFlags, ...v.denoFlags],
            };
            if (phase === "throughput") {
              const run = await steadyRun("hub", vcfg, names, cl, {}, "ab", disturbed);
              throughput.get(v.label)!.push(run);
              loads.push(run.load1);
              log(
                `${shape} rep ${rep + 1} ${v.label}: ${round(run.hubCpuMsPerReconcile ?? NaN, 3)} ms/reconcile, ${
                  round(run.objectsPerSecond)
                } obj/s, peak ${round(run.peakRssMb ?? NaN, 1)} MB, writes/obj ${round(run.writesPerObject)}, load ${
                  round(run.load1, 1)
                }`,
              );
              continue;
            }
            const run = await backlogRun(vcfg, names, cl, { kind: "hub", empty });
            if (run.missing > 0) log(`${v.label}: ${run.missing} objects never became Ok`);
            backlog.get(v.label)![empty ? "empty" : "full"].push(run);
            loads.push(load1());
            log(
              `${shape} rep ${rep + 1} ${v.label}${empty ? " empty" : ""}: cpu ${run.cpuMs} ms, ${
                round(run.seconds)
              } s${run.firstSeconds === undefined ? "" : ` (first Ok ${round(run.firstSeconds, 2)} s)`}, peak ${
                round(run.peakRssMb ?? NaN, 1)
              } MB, writes/obj ${round(run.writesPerObject)}, load ${round(run.load1, 1)}`,
            );
          }
        }
      }
      const fig = new Map<Variant["label"], Record<string, Summary>>(variants.map((v) => [
        v.label,
        phase === "throughput" ? { ...throughputFigures(throughput.get(v.label)!) } : {
          ...figures(backlog.get(v.label)!.empty, backlog.get(v.label)!.full),
        },
      ]));
      const fa = fig.get("A")!;
      const others = variants.slice(1).map((v) => v.label);
      const ratio = (k: string, l: Variant["label"]) => round(fig.get(l)![k].median / fa[k].median, 3);
      report[shape] = { ...Object.fromEntries(fig), load: summarize(loads), disturbed };
      const made = phase === "throughput" ? "created while the hub runs" : "kubectl-applied before the hub starts";
      console.log(`\n### ${phase}, ${shape} CRD, ${names.length} × ${cfg.backlogObjects} ${made}, ${reps} reps`);
      for (const v of variants) console.log(`${v.label} = ${[...v.denoFlags, v.entry, ...v.args].join(" ")}`);
      const labels = variants.map((v) => v.label);
      console.log(`| figure | ${labels.join(" | ")} | ${others.map((l) => `${l}/A`).join(" | ")} |`);
      console.log(`|---|${labels.map(() => "--:|").join("")}${others.map(() => "--:|").join("")}`);
      for (const k of Object.keys(fa)) {
        const cells = [...labels.map((l) => fmt(fig.get(l)![k])), ...others.map((l) => String(ratio(k, l)))];
        console.log(`| ${k} | ${cells.join(" | ")} |`);
      }
      console.log(`load average (1 min) ${fmt(summarize(loads), 1)}`);
    }
  } finally {
    await setShape(cl, original);
  }
  const out = outFlag ?? `${new URL("../..", import.meta.url).pathname}bench/last_ab.json`;
  await Deno.writeTextFile(out, JSON.stringify(report, null, 2) + "\n");
  log(`wrote ${out}`);
}

if (import.meta.main) await main();

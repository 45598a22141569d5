// A/B of two hub builds (or two flag sets) on the same backlog in the same run: `deno run -A bench/ab.ts`.
//
// Each repetition gives both variants an empty start and a fresh `kubectl apply` backlog (bench/_backlog.ts),
// alternating which goes first; the report gives medians of hub CPU per object net of the empty start, seconds from
// process start to drained, peak RSS and writes per object, and B over A. On a shared, noisy machine judge a change
// by these same-run ratios of process CPU time, never by wall time alone.
//
// A baseline is any checkout of the hub, e.g. `git archive HEAD | tar -x -C .cache/ab-base` (then
// `--a .cache/ab-base/src/main.ts`); entries are relative to the repository root.

import { parseArgs } from "node:util";
import { requireClusters } from "../tests/support/local_clusters.ts";
import { type BacklogRun, backlogRun } from "./_backlog.ts";
import { BenchCluster } from "./_cluster.ts";
import { shapeOf } from "./_report.ts";
import { type Config, load1, log, setShape, type Shape, SHAPES } from "./_run.ts";
import { round, summarize, type Summary } from "./_stats.ts";

const USAGE = `Usage: deno run -A bench/ab.ts [options]
  --a ENTRY          variant A's script, relative to the repository root (default src/main.ts)
  --b ENTRY          variant B's script (default src/main.ts)
  --a-arg FLAG       extra hub flag for A, repeatable (e.g. --a-arg=--qps=5000); --b-arg likewise
  --deno-flag FLAG   extra \`deno run\` flag for both, repeatable; --a-deno-flag, --b-deno-flag for one
  --objects N        backlog objects per cluster, made by kubectl apply (default 500)
  --reps R           repetitions (default 3)
  --shapes a,b       CRD shapes: status,seed (default status)
  --clusters N       local clusters to use (default 3)
  --concurrency C    the hub's --concurrency (default: the hub's own default)`;

interface Variant {
  label: "A" | "B";
  entry: string;
  args: string[];
  denoFlags: string[];
}

function parse(): {
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
      "a-arg": { type: "string", multiple: true },
      "b-arg": { type: "string", multiple: true },
      "deno-flag": { type: "string", multiple: true },
      "a-deno-flag": { type: "string", multiple: true },
      "b-deno-flag": { type: "string", multiple: true },
      objects: { type: "string" },
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
  const concurrency = values.concurrency === undefined ? [] : ["--concurrency", values.concurrency];
  const argsOf = (extra: string[] | undefined) => [...concurrency, ...(extra ?? [])];
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
  return {
    variants: [
      {
        label: "A",
        entry: values.a ?? "src/main.ts",
        args: argsOf(values["a-arg"]),
        denoFlags: values["a-deno-flag"] ?? [],
      },
      {
        label: "B",
        entry: values.b ?? "src/main.ts",
        args: argsOf(values["b-arg"]),
        denoFlags: values["b-deno-flag"] ?? [],
      },
    ],
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

function fmt(s: Summary, digits = 3): string {
  return `${round(s.median, digits)} (${round(s.min, digits)}–${round(s.max, digits)})`;
}

async function main(): Promise<void> {
  const { variants, reps, shapes, clusters, cfg } = parse();
  const names = requireClusters().names.slice(0, clusters);
  const cl = names.map((n) => new BenchCluster(n));
  await Promise.all(cl.map((c) => c.detect()));
  const original = shapeOf(cl);
  const report: Record<string, unknown> = { variants, objects: cfg.backlogObjects, clusters: names, reps };
  try {
    for (const shape of shapes) {
      await setShape(cl, shape);
      const runs = new Map<string, { empty: BacklogRun[]; full: BacklogRun[] }>();
      for (const v of variants) runs.set(v.label, { empty: [], full: [] });
      const loads: number[] = [];
      for (let rep = 0; rep < reps; rep++) {
        const order = rep % 2 === 0 ? variants : [...variants].reverse();
        for (const empty of [true, false]) {
          for (const v of order) {
            const vcfg: Config = {
              ...cfg,
              hubEntry: v.entry,
              hubArgs: v.args,
              denoFlags: [...cfg.denoFlags, ...v.denoFlags],
            };
            const run = await backlogRun(vcfg, names, cl, { kind: "hub", empty });
            if (run.missing > 0) log(`${v.label}: ${run.missing} objects never became Ok`);
            runs.get(v.label)![empty ? "empty" : "full"].push(run);
            loads.push(load1());
            log(
              `${shape} rep ${rep + 1} ${v.label}${empty ? " empty" : ""}: cpu ${run.cpuMs} ms, ${
                round(run.seconds)
              } s, peak ${round(run.peakRssMb ?? NaN, 1)} MB, writes/obj ${round(run.writesPerObject)}, load ${
                round(run.load1, 1)
              }`,
            );
          }
        }
      }
      const fa = figures(runs.get("A")!.empty, runs.get("A")!.full);
      const fb = figures(runs.get("B")!.empty, runs.get("B")!.full);
      const ratio = (k: keyof Figures) => round(fb[k].median / fa[k].median, 3);
      report[shape] = { A: fa, B: fb, load: summarize(loads) };
      console.log(`\n### ${shape} CRD, ${names.length} × ${cfg.backlogObjects} kubectl-applied, ${reps} reps`);
      for (const v of variants) console.log(`${v.label} = ${[...v.denoFlags, v.entry, ...v.args].join(" ")}`);
      console.log("| figure | A | B | B/A |\n|---|--:|--:|--:|");
      for (const k of Object.keys(fa) as (keyof Figures)[]) {
        console.log(`| ${k} | ${fmt(fa[k])} | ${fmt(fb[k])} | ${ratio(k)} |`);
      }
      console.log(`load average (1 min) ${fmt(summarize(loads), 1)}`);
    }
  } finally {
    await setShape(cl, original);
  }
  const out = `${new URL("..", import.meta.url).pathname}bench/last_ab.json`;
  await Deno.writeTextFile(out, JSON.stringify(report, null, 2) + "\n");
  log(`wrote ${out}`);
}

if (import.meta.main) await main();

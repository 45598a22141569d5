// The bench's command line: `deno task bench` flags into a Config (exit 2 with one line on a bad value).

import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { type Config, type Phase, PHASES, type Shape, SHAPES } from "./run.ts";

/** The repository root, with a trailing slash. */
export const ROOT = new URL("../..", import.meta.url).pathname;

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
  --background C,S,D      background phase: ConfigMaps, Secrets (4 KiB each) and Deployments per cluster
                          (default 3000,1000,200; 300,100,20 with --quick)
  --clusters-operators O  clusters phase: uuid (--operators uuid), default (the hub's default operators) or
                          both (default both)
  --hub-entry FILE        the hub's script instead of src/cli/main.ts, relative to the repository root (a clean
                          copy: git archive HEAD | tar -x -C .cache/bench-head; then .cache/bench-head/src/cli/main.ts)
  --hub-arg FLAG          extra flag for the hub, repeatable, e.g. --hub-arg=--qps=2000
  --hub-deno-flag FLAG    extra flag for the hub's \`deno run\`, repeatable, e.g. --hub-deno-flag=--cpu-prof
  --out FILE              JSON output (default bench/last.json; the SVG goes beside it)
  --quick                 smaller run: 300 objects, 600 waiting in fairness, 2000 per cluster at scale
  --help`;

/** Parses `deno task bench` flags; `--help` prints the usage and exits. */
export function parseConfig(argv: string[]): Config {
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
      background: { type: "string" },
      "clusters-operators": { type: "string" },
      "hub-entry": { type: "string" },
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
  let background: Config["background"];
  if (values.background !== undefined) {
    const b = values.background.split(",").map((x) => Number(x.trim()));
    if (b.length !== 3 || b.some((x) => !Number.isInteger(x) || x < 0)) {
      console.error(`bench: invalid --background "${values.background}": three whole numbers C,S,D`);
      Deno.exit(2);
    }
    background = { configMaps: b[0], secrets: b[1], deployments: b[2], bytes: 4096 };
  }
  const clustersOperators = values["clusters-operators"] ?? "both";
  if (!["uuid", "default", "both"].includes(clustersOperators)) {
    console.error(`bench: invalid --clusters-operators "${clustersOperators}": choose uuid, default or both`);
    Deno.exit(2);
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
    background,
    hubEntry: values["hub-entry"],
    clustersOperators: clustersOperators as Config["clustersOperators"],
  };
}

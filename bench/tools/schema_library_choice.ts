// TypeBox or zod 4 for defineResource: import time, RSS and build time of a Website-sized schema, how directly each
// gives an apiextensions structural JSON Schema, and the `deno check` time of a small typed handler on each.
//
// Usage: deno run -A bench/tools/schema_library_choice.ts [--reps 5] [--check-reps 3]
// Each figure is the median of --reps fresh processes (imports) or --check-reps `deno check` runs (a new file each
// time, so nothing is reused from deno's check cache). zod is imported by an inline npm specifier with --no-lock:
// it is not a dependency of the project and deno.lock never records it.

import { parseArgs } from "node:util";

const ROOT = new URL("../..", import.meta.url).pathname;
const TYPEBOX = "npm:typebox@1.4.3";
const ZOD = "npm:zod@4.6.7";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    reps: { type: "string", default: "5" },
    "check-reps": { type: "string", default: "3" },
    child: { type: "string" },
  },
  strict: true,
});

type Library = "typebox" | "zod" | "none";

/** What one child process measured. */
interface ChildFigures {
  importMs: number;
  buildMs: number;
  jsonSchemaMs: number;
  rssBeforeMiB: number;
  /** After the import, before any schema is built. */
  rssImportMiB: number;
  rssAfterMiB: number;
  jsonSchema?: unknown;
}

/** In a fresh process: import the library, build the Website schema 1,000 times, and make its JSON Schema. */
async function child(library: Library): Promise<ChildFigures> {
  const mib = () => Deno.memoryUsage().rss / 2 ** 20;
  const rssBeforeMiB = mib();
  const t0 = performance.now();
  if (library === "none") {
    return { importMs: 0, buildMs: 0, jsonSchemaMs: 0, rssBeforeMiB, rssImportMiB: mib(), rssAfterMiB: mib() };
  }
  if (library === "typebox") {
    const { default: Type } = await import(TYPEBOX);
    const t1 = performance.now();
    const rssImportMiB = mib();
    // deno-lint-ignore no-explicit-any
    let spec: any;
    for (let i = 0; i < 1000; i++) {
      spec = Type.Object({
        image: Type.String({ minLength: 1, description: "The container image the Website's Deployment runs." }),
        content: Type.Optional(Type.String({ description: "The page served, kept in the Website's ConfigMap." })),
        replicas: Type.Optional(Type.Integer({ minimum: 0, default: 1 })),
        ports: Type.Optional(Type.Array(Type.Object({ name: Type.String(), port: Type.Integer() }))),
      });
    }
    const t2 = performance.now();
    // A TypeBox schema is a JSON Schema object already.
    const jsonSchema = JSON.parse(JSON.stringify(spec));
    const t3 = performance.now();
    return {
      importMs: t1 - t0,
      buildMs: t2 - t1,
      jsonSchemaMs: t3 - t2,
      rssBeforeMiB,
      rssImportMiB,
      rssAfterMiB: mib(),
      jsonSchema,
    };
  }
  const { z } = await import(ZOD);
  const t1 = performance.now();
  const rssImportMiB = mib();
  // deno-lint-ignore no-explicit-any
  let spec: any;
  for (let i = 0; i < 1000; i++) {
    spec = z.object({
      image: z.string().min(1).describe("The container image the Website's Deployment runs."),
      content: z.string().describe("The page served, kept in the Website's ConfigMap.").optional(),
      replicas: z.number().int().min(0).default(1).optional(),
      ports: z.array(z.object({ name: z.string(), port: z.number().int() })).optional(),
    });
  }
  const t2 = performance.now();
  const jsonSchema = z.toJSONSchema(spec);
  const t3 = performance.now();
  return {
    importMs: t1 - t0,
    buildMs: t2 - t1,
    jsonSchemaMs: t3 - t2,
    rssBeforeMiB,
    rssImportMiB,
    rssAfterMiB: mib(),
    jsonSchema,
  };
}

/**
 * What keeps a JSON Schema from being an apiextensions structural schema as it is: `$schema`, `additionalProperties`
 * beside `properties` (mutually exclusive there), and integers wider than int64 (zod's safe-integer bounds are fine;
 * flagged only when not representable).
 */
function structuralProblems(schema: unknown, path = ""): string[] {
  if (!schema || typeof schema !== "object") return [];
  const s = schema as Record<string, unknown>;
  const out: string[] = [];
  if ("$schema" in s) out.push(`${path || "/"}: $schema`);
  if ("properties" in s && "additionalProperties" in s) {
    out.push(`${path || "/"}: additionalProperties with properties`);
  }
  for (const [k, v] of Object.entries(s)) {
    if (k === "properties" && v && typeof v === "object") {
      for (const [p, sub] of Object.entries(v)) out.push(...structuralProblems(sub, `${path}/${p}`));
    } else if (k === "items") out.push(...structuralProblems(v, `${path}[]`));
  }
  return out;
}

async function runChild(library: Library): Promise<ChildFigures> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--no-lock", import.meta.filename!, "--child", library],
    cwd: ROOT,
    stdout: "piped",
    stderr: "inherit",
  }).output();
  if (!out.success) throw new Error(`the ${library} child failed (exit ${out.code})`);
  return JSON.parse(new TextDecoder().decode(out.stdout));
}

/** `deno check` of a small typed handler whose spec type comes from the library, in a new file (no check cache). */
async function checkMs(library: "typebox" | "zod", rep: number): Promise<number> {
  const dir = await Deno.makeTempDir({ dir: ROOT, prefix: ".schema_choice_" });
  const schema = library === "typebox"
    ? `import Type, { type Static } from "${TYPEBOX}";\n` +
      `const Spec = Type.Object({ image: Type.String({ minLength: 1 }), content: Type.Optional(Type.String()) });\n` +
      `type Spec = Static<typeof Spec>;\n`
    : `import { z } from "${ZOD}";\n` +
      `const Spec = z.object({ image: z.string().min(1), content: z.string().optional() });\n` +
      `type Spec = z.infer<typeof Spec>;\n`;
  const file = `${dir}/handler.ts`;
  await Deno.writeTextFile(
    file,
    `// rep ${rep} ${crypto.randomUUID()}\n${schema}` +
      `export const handler = (spec: Spec): { image: string; length: number } =>\n` +
      `  ({ image: spec.image, length: (spec.content ?? "").length });\n`,
  );
  try {
    const t0 = performance.now();
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["check", "--quiet", "--no-lock", file],
      cwd: ROOT,
      stdout: "null",
      stderr: "piped",
    }).output();
    const ms = performance.now() - t0;
    if (!out.success) {
      throw new Error(`deno check of the ${library} handler failed: ${new TextDecoder().decode(out.stderr)}`);
    }
    return ms;
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const r1 = (x: number) => Math.round(x * 10) / 10;

if (values.child) {
  console.log(JSON.stringify(await child(values.child as Library)));
} else {
  const reps = Number(values.reps);
  const checkReps = Number(values["check-reps"]);
  // Warm the caches (npm packages downloaded, modules transpiled) before measuring.
  for (const lib of ["none", "typebox", "zod"] as const) await runChild(lib);
  const runs: Record<Library, ChildFigures[]> = { none: [], typebox: [], zod: [] };
  for (let i = 0; i < reps; i++) {
    for (const lib of ["none", "typebox", "zod"] as const) runs[lib].push(await runChild(lib));
  }
  const baseRss = median(runs.none.map((r) => r.rssAfterMiB));
  const checks: Record<"typebox" | "zod", number[]> = { typebox: [], zod: [] };
  await checkMs("typebox", -1);
  await checkMs("zod", -1);
  for (let i = 0; i < checkReps; i++) {
    for (const lib of ["typebox", "zod"] as const) checks[lib].push(await checkMs(lib, i));
  }
  console.log(
    `schema_library_choice ${new Date().toISOString().slice(0, 10)}: medians of ${reps} processes, ` +
      `${checkReps} deno check runs; ${navigator.hardwareConcurrency} CPUs; load ${Deno.loadavg().map(r1).join(" ")}`,
  );
  console.log(
    "| library | import ms | build x1000 ms | JSON Schema ms | RSS over bare deno MiB: imported / after 1000 builds " +
      "| structural fixes needed | deno check ms |",
  );
  console.log("| --- | --- | --- | --- | --- | --- | --- |");
  for (const lib of ["typebox", "zod"] as const) {
    const r = runs[lib];
    const problems = structuralProblems(r[0].jsonSchema);
    console.log(
      `| ${lib === "typebox" ? TYPEBOX : ZOD} | ${r1(median(r.map((x) => x.importMs)))} | ` +
        `${r1(median(r.map((x) => x.buildMs)))} | ${r1(median(r.map((x) => x.jsonSchemaMs)))} | ` +
        `${r1(median(r.map((x) => x.rssImportMiB)) - baseRss)} / ${
          r1(median(r.map((x) => x.rssAfterMiB)) - baseRss)
        } | ${problems.length ? problems.join("; ") : "none"} | ` +
        `${Math.round(median(checks[lib]))} |`,
    );
  }
  console.log("\nzod's z.toJSONSchema of the spec:", JSON.stringify(runs.zod[0].jsonSchema));
  console.log("TypeBox's spec as it is:", JSON.stringify(runs.typebox[0].jsonSchema));
}

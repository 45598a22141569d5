// Whether V8 honours --heap-growing-percent set at run time (node:v8 setFlagsFromString) as it does on the command
// line: `deno run -A bench/tools/v8_runtime_flag.ts`. Runs one allocation-heavy child three ways (no flag, the flag
// set at run time, the flag on the command line) with --trace-gc, and prints each one's count of major collections.

const PERCENT = 5; // a factor of 1.05: far more major collections than V8's own factor, if it takes effect

const child = `
import v8 from "node:v8";
if (Deno.args[0] === "runtime") v8.setFlagsFromString("--heap-growing-percent=${PERCENT}");
const live = [];
for (let i = 0; i < 15000; i++) {
  live.push(new Array(256).fill(i).map((x) => ({ x })));
  let garbage = [];
  for (let j = 0; j < 400; j++) garbage.push(new Array(100).fill(j));
  garbage = [];
}
console.log(live.length);
`;

async function majorCollections(mode: "none" | "runtime" | "flag"): Promise<number> {
  const flags = mode === "flag" ? `--trace-gc,--heap-growing-percent=${PERCENT}` : "--trace-gc";
  const file = await Deno.makeTempFile({ suffix: ".js" });
  try {
    await Deno.writeTextFile(file, child);
    const out = await new Deno.Command(Deno.execPath(), { args: ["run", `--v8-flags=${flags}`, file, mode] }).output();
    if (!out.success) throw new Error(`the ${mode} child failed: ${new TextDecoder().decode(out.stderr)}`);
    return new TextDecoder().decode(out.stdout).split("\n").filter((l) => l.includes("Mark-Compact")).length;
  } finally {
    await Deno.remove(file);
  }
}

if (import.meta.main) {
  for (const mode of ["none", "runtime", "flag"] as const) {
    console.log(`${mode.padEnd(8)} major collections: ${await majorCollections(mode)}`);
  }
}

// The V8 heap settings the hub runs with: deno.json's run task (what `deno task run` and every bench use) and its
// compile task (baked into the production binary) carry the same --v8-flags, so the binary holds what was measured.
// Why a 2 MB young generation and an old generation that grows by half its live size: docs/benchmarks.md, "Memory at
// scale".

import assert from "node:assert/strict";

const config = JSON.parse(await Deno.readTextFile(new URL("../../deno.json", import.meta.url)));
const v8Flags = (task: string) => String(config.tasks[task]).split(/\s+/).filter((w) => w.startsWith("--v8-flags"));

Deno.test("the run and compile tasks give the hub the same V8 heap flags: 2 MB semi-spaces, an old generation grown by 50 %", async () => {
  assert.deepEqual(v8Flags("run"), ["--v8-flags=--max-semi-space-size=2,--heap-growing-percent=50"]);
  assert.deepEqual(v8Flags("compile"), v8Flags("run"));
  // V8 takes the flag: a process started with it reports no unknown flag and runs.
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["eval", ...v8Flags("run"), "console.log('ok')"],
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(new TextDecoder().decode(out.stdout).trim(), "ok");
  assert.doesNotMatch(new TextDecoder().decode(out.stderr), /unknown|Error/i);
  // ... and holds them: V8's own flag listing (printed by --help after the others) shows the values set.
  const help = await new Deno.Command(Deno.execPath(), {
    args: ["eval", ...v8Flags("run"), "--v8-flags=--help", "0"],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const listing = new TextDecoder().decode(help.stdout) + new TextDecoder().decode(help.stderr);
  assert.match(listing, /--max-semi-space-size \(.*\)\n\s+type: size_t\s+default: --max-semi-space-size=2\b/);
  assert.match(listing, /--heap-growing-percent \(.*\)\n\s+type: int\s+default: --heap-growing-percent=50\b/);
});

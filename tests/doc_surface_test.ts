// The library surface as `deno doc` shows it: the root mod.ts documents without a warning (no type package of the
// npm dependencies is pulled into its graph by a type-only import).

import assert from "node:assert/strict";

Deno.test("deno doc mod.ts prints the surface without a single warning", async () => {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["doc", "mod.ts"],
    cwd: new URL("..", import.meta.url).pathname,
    env: { NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const stderr = new TextDecoder().decode(out.stderr);
  const stdout = new TextDecoder().decode(out.stdout);
  assert.equal(out.code, 0, stderr);
  const warnings = stderr.split("\n").filter((l) => /warning/i.test(l));
  assert.deepEqual(warnings.slice(0, 3), [], `${warnings.length} warnings, e.g. the first three above`);
  assert.match(stdout, /defineHandlers/, "the surface is documented");
});

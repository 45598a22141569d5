// Tests of the process.env view npm packages get: run in a child `deno run` with a restricted --allow-env, as the
// compiled binary runs, and with an unrestricted one, as `deno task run` does.

import assert from "node:assert/strict";
import { withTempDir } from "../../dev/support/local_client.ts";

const NPM_ENV = new URL("./_npm_env.ts", import.meta.url).href;

/** Runs a script that imports _npm_env.ts first, then enumerates and reads process.env as an npm package would. */
async function probe(allowEnv: string): Promise<{ code: number; out: Record<string, unknown>; stderr: string }> {
  let result: { code: number; out: Record<string, unknown>; stderr: string } | undefined;
  await withTempDir(async (dir) => {
    const script = `${dir}/probe.ts`;
    await Deno.writeTextFile(
      script,
      [
        `import ${JSON.stringify(NPM_ENV)};`,
        `import process from "node:process";`,
        `const keys = Object.keys(process.env);`,
        `console.log(JSON.stringify({ keys, home: process.env.HOME ?? null, secret: process.env.HUB_PROBE_SECRET ?? null,`,
        `  has: "HUB_PROBE_SECRET" in process.env }));`,
      ].join("\n"),
    );
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["run", "--no-prompt", "--no-config", allowEnv, script],
      env: { HOME: "/home/probe", HUB_PROBE_SECRET: "s3cret", NO_COLOR: "1" },
      stdin: "null",
      signal: AbortSignal.timeout(60_000), // hang guard
    }).output();
    const d = new TextDecoder();
    const stdout = d.decode(out.stdout);
    result = { code: out.code, out: stdout ? JSON.parse(stdout) : {}, stderr: d.decode(out.stderr) };
  });
  return result!;
}

Deno.test("With a restricted --allow-env, npm packages can enumerate process.env and see only what is granted", async () => {
  const { code, out, stderr } = await probe("--allow-env=HOME");
  assert.equal(code, 0, stderr);
  assert.equal(out.home, "/home/probe");
  assert.equal(out.secret, null, "a variable the process may not read is unset in the view");
  assert.equal(out.has, false);
  assert.deepEqual(out.keys, ["HOME"]);
});

Deno.test("With an unrestricted --allow-env, process.env is left whole (exec plugins inherit it)", async () => {
  const { code, out, stderr } = await probe("--allow-env");
  assert.equal(code, 0, stderr);
  assert.equal(out.secret, "s3cret");
  assert.ok((out.keys as string[]).includes("HUB_PROBE_SECRET"));
});

Deno.test("Both entry points import _npm_env.ts before anything else, so no npm package sees process.env first", async () => {
  const entries = { "./main.ts": "./_npm_env.ts", "./commands/cluster_register.ts": "../_npm_env.ts" };
  for (const [entry, npmEnv] of Object.entries(entries)) {
    const text = await Deno.readTextFile(new URL(entry, import.meta.url));
    const firstImport = text.split("\n").find((l) => l.startsWith("import "));
    assert.equal(firstImport, `import "${npmEnv}";`, entry);
  }
});

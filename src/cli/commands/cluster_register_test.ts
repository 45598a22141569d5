// Tests of the cluster:add / cluster:remove entry point, run as the tasks run it (`deno run` with their permissions),
// and of its duration parser. Registrations against real clusters are tested in tests/providers/cluster_cli_test.ts.

import assert from "node:assert/strict";
import { withTempDir } from "../../../dev/support/local_client.ts";
import { parseDuration } from "./cluster_register.ts";

const ROOT = new URL("../../..", import.meta.url).pathname;

/** The permission flags of the `cluster:add` task in deno.json. */
function taskPermissions(): string[] {
  const config = JSON.parse(Deno.readTextFileSync(`${ROOT}deno.json`));
  return (config.tasks["cluster:add"] as string).split(/\s+/).filter((w) => w.startsWith("--allow-"));
}

async function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--no-prompt", ...taskPermissions(), `${ROOT}src/cli/commands/cluster_register.ts`, ...args],
    cwd: ROOT,
    env: { NO_COLOR: "1" },
    stdin: "null",
    signal: AbortSignal.timeout(60_000), // hang guard
  }).output();
  const d = new TextDecoder();
  return { code: out.code, stdout: d.decode(out.stdout), stderr: d.decode(out.stderr) };
}

/** Asserts exit code 2 and exactly one stderr line matching `pattern`. */
async function usageError(args: string[], pattern: RegExp): Promise<void> {
  const out = await cli(args);
  assert.equal(out.code, 2, `${args.join(" ")}: ${out.stderr}`);
  const lines = out.stderr.trimEnd().split("\n");
  assert.equal(lines.length, 1, out.stderr);
  assert.match(lines[0], pattern);
}

Deno.test("cluster:add --help prints the usage and exit codes and exits 0", async () => {
  const out = await cli(["add", "--help"]);
  assert.equal(out.code, 0, out.stderr);
  assert.match(out.stdout, /deno task cluster:add --context NAME/);
  assert.match(out.stdout, /Exit codes: 0 done, 1 a step failed, 2 bad flags or kubeconfig/);
  assert.match(out.stdout, /--mirror-namespaces NS +namespaces .* a Role in each\. Default none/s);
});

Deno.test("The cluster CLI exits 2 with one line for a missing command, an unknown flag or a missing --context", async () => {
  await usageError([], /^cluster: error: expected "add" or "remove" as the first argument, got ""$/);
  await usageError(["register"], /got "register"/);
  await usageError(["add", "--context", "prod", "--bogus"], /^cluster: error: .*--bogus.*\(see --help\)$/);
  await usageError(["remove"], /^cluster: error: --context is required/);
});

Deno.test("The cluster CLI exits 2 for an invalid name, TTL or flag combination, naming the problem", async () => {
  await usageError(["add", "--context", "Prod_1"], /invalid cluster name "Prod_1".*pass --name/);
  await usageError(["add", "--context", "prod", "--secret-namespace", "Bad_NS"], /invalid --secret-namespace "Bad_NS"/);
  await usageError(["add", "--context", "prod", "--token-ttl", "5m"], /invalid --token-ttl "5m": .*at least 10m/);
  await usageError(["add", "--context", "prod", "--token-ttl", "1h", "--non-expiring"], /choose one of/);
  await usageError(["remove", "--context", "prod", "--token-ttl", "1h"], /are for cluster:add/);
  await usageError(["add", "--context", "prod", "--purge"], /--purge is for cluster:remove/);
  await usageError(
    ["add", "--context", "prod", "--mirror-namespaces", "apps,Bad_NS"],
    /^cluster: error: invalid --mirror-namespaces "apps,Bad_NS": comma-separated namespace names/,
  );
  await usageError(["add", "--context", "prod", "--mirror-namespaces", ","], /invalid --mirror-namespaces ","/);
  await usageError(["remove", "--context", "prod", "--mirror-namespaces", "apps"], /is for cluster:add/);
});

Deno.test("The cluster CLI exits 2 for a context no kubeconfig defines, listing the known ones", async () => {
  await usageError(
    ["add", "--kubeconfig", "clusters/local.yaml", "--context", "nowhere"],
    /^cluster: error: unknown context "nowhere".*dev, prod, staging/,
  );
});

Deno.test("cluster:remove --dry-run of a file registration prints what it would delete and deletes nothing", () =>
  withTempDir(async (dir) => {
    await Deno.writeTextFile(`${dir}/edge.yaml`, "kept");
    const out = await cli([
      "remove",
      "--kubeconfig",
      "clusters/local.yaml",
      "--context",
      "prod",
      "--name",
      "edge",
      "--cluster-dir",
      dir,
      "--dry-run",
    ]);
    assert.equal(out.code, 0, out.stderr);
    assert.match(out.stdout, /edge\.yaml/);
    assert.equal(await Deno.readTextFile(`${dir}/edge.yaml`), "kept");
  }));

Deno.test("parseDuration reads s, m, h and d and their combinations, and nothing else", () => {
  assert.equal(parseDuration("90s"), 90);
  assert.equal(parseDuration("10m"), 600);
  assert.equal(parseDuration("720h"), 720 * 3600);
  assert.equal(parseDuration("90d"), 90 * 86400);
  assert.equal(parseDuration("1h30m"), 5400);
  for (const bad of ["", "10", "1w", "h", "1h 30m", "-1h", "1.5h", "1hx"]) {
    assert.equal(parseDuration(bad), undefined, bad);
  }
});

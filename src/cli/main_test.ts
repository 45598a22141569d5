// Tests of the hub's CLI entry point, run as a user runs it: `deno run` with the run task's permissions.

import assert from "node:assert/strict";
import { HubProcess, runHubCli } from "../../dev/support/hub_process.ts";
import { testNamespace } from "../../dev/support/namespace.ts";
import { VERSION } from "./main.ts";

Deno.test("main --help prints the flags on stdout and exits 0", async () => {
  const out = await runHubCli(["--help"]);
  assert.equal(out.code, 0, out.stderr);
  for (const flag of ["--clusters", "--kubeconfig", "--cluster-dir", "--namespace", "--liveness", "--operators"]) {
    assert.ok(out.stdout.includes(flag), `--help names ${flag}`);
  }
  assert.equal(out.stderr, "");
});

Deno.test("main --version prints the version and exits 0", async () => {
  const out = await runHubCli(["--version"]);
  assert.equal(out.code, 0, out.stderr);
  assert.equal(out.stdout, `operator-hub ${VERSION}\n`);
});

Deno.test("main exits 2 with one line naming a bad flag", async () => {
  const out = await runHubCli(["--clusters", "prod", "--no-such-flag"]);
  assert.equal(out.code, 2);
  assert.equal(out.stdout, "");
  const lines = out.stderr.trimEnd().split("\n");
  assert.equal(lines.length, 1, out.stderr);
  assert.match(lines[0], /^operator-hub: error: .*--no-such-flag/);
});

Deno.test("main exits 2 with one line naming an unknown context and the known ones", async () => {
  const out = await runHubCli(["--kubeconfig", "clusters/local.yaml", "--clusters", "prod2"]);
  assert.equal(out.code, 2);
  const lines = out.stderr.trimEnd().split("\n");
  assert.equal(lines.length, 1, out.stderr);
  assert.match(lines[0], /^operator-hub: error: unknown context "prod2".*known contexts: dev, prod, staging/);
});

Deno.test("main runs the hub on prod in its own namespace until SIGTERM, ready on /readyz, and exits 0", async () => {
  await using ns = await testNamespace("main", { contexts: ["prod"] });
  const hub = HubProcess.start({ clusters: ["prod"], args: ["--namespace", ns.name] });
  try {
    await hub.waitReady();
    const ready = await hub.get("/readyz");
    assert.equal(ready.status, 200);
    assert.equal(ready.body.ready, true);
    assert.equal(ready.body.clusters.prod.state, "watching");
  } finally {
    const status = await hub.stop();
    assert.equal(status.code, 0, hub.tail());
  }
});

// `--readiness-clusters`: its values, its one-line error, its --help lines.
import assert from "node:assert/strict";
import { FlagError } from "./flag_values.ts";
import { parseFlags } from "./flags.ts";
import { parseReadinessClusters, readinessHelp } from "./readiness_flag.ts";

Deno.test("parseReadinessClusters() is command-line by default and accepts command-line or all", () => {
  assert.equal(parseReadinessClusters({}), "command-line");
  assert.equal(parseReadinessClusters({ "readiness-clusters": "command-line" }), "command-line");
  assert.equal(parseReadinessClusters({ "readiness-clusters": "all" }), "all");
  assert.equal(parseFlags(["--clusters=a"]).readinessClusters, "command-line");
  assert.equal(parseFlags(["--clusters=a", "--readiness-clusters", "all"]).readinessClusters, "all");
});

Deno.test("parseReadinessClusters() refuses anything else with one line naming the value and the choices", () => {
  for (const bad of ["", "ALL", "every", "all,command-line"]) {
    assert.throws(
      () => parseFlags(["--clusters=a", `--readiness-clusters=${bad}`]),
      (e: Error) => {
        assert.ok(e instanceof FlagError, String(e));
        assert.equal(
          e.message,
          `invalid --readiness-clusters ${JSON.stringify(bad)}: choose command-line (the default) or all`,
        );
        assert.ok(!e.message.includes("\n"));
        return true;
      },
    );
  }
});

Deno.test("readinessHelp() names both modes and says which clusters never make the pod unready", () => {
  const help = readinessHelp().join("\n").replace(/\s+/g, " ");
  assert.match(help, /--readiness-clusters MODE/);
  assert.match(help, /command-line \(default/);
  assert.match(help, /the names --clusters lists, the contexts of --kubeconfig files and \$KUBECONFIG, in-cluster/);
  assert.match(
    help,
    /other clusters from Secrets, the folder, ClusterProfiles and Cluster API show in \/status and never make the pod unready/,
  );
  assert.match(help, /or all \(every registered cluster/);
});

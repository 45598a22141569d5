// Tests of main()'s cluster step: the home cluster's choice, and the one-line usage errors it gives before any
// cluster is contacted (kubeconfig files only: nothing here opens a connection).

import assert from "node:assert/strict";
import { type ClusterAccess, ConfigError, IN_CLUSTER } from "../../kube/mod.ts";
import { silentLogger } from "../../util/mod.ts";
import { homeCluster, selectClusters } from "./cluster_selection.ts";
import { parseFlags } from "../flags/parse_flags.ts";
import { UsageError } from "../usage_error.ts";
import { kubeconfigFile } from "../../../dev/support/kubeconfig_file.ts";

function access(name: string): ClusterAccess {
  return {
    name,
    server: `https://${name}.example:6443`,
    source: "test",
    auth: () => Promise.resolve({ headers: {}, insecureSkipTlsVerify: false }),
  };
}

const kubeconfig = (contexts: string[]) => kubeconfigFile(contexts, "cluster-selection-");

Deno.test("homeCluster() prefers in-cluster, then --home-cluster, then the first selected cluster", () => {
  const [a, b, pod] = [access("a"), access("b"), access(IN_CLUSTER)];
  assert.equal(homeCluster("b", [a, b, pod]), pod);
  assert.equal(homeCluster("b", [a, b]), b);
  assert.equal(homeCluster(undefined, [a, b]), a);
  assert.throws(() => homeCluster("c", [a, b]), (err: Error) => {
    assert.ok(err instanceof ConfigError);
    assert.equal(err.message, 'invalid --home-cluster "c": choose one of the selected clusters (a, b)');
    return true;
  });
});

Deno.test("selectClusters() selects contexts, settles the home cluster and the Lease's place", async () => {
  const file = kubeconfig(["one", "two"]);
  try {
    const flags = parseFlags([
      "--kubeconfig",
      file,
      "--clusters",
      "one,two",
      "--home-cluster",
      "two",
      "--leader-elect",
    ]);
    const got = await selectClusters(flags, silentLogger());
    assert.deepEqual(got.selected.map((a) => a.name), ["one", "two"]);
    assert.equal(got.home?.name, "two");
    assert.equal(got.leaderElection?.cluster, "two");
    assert.equal(got.leaderElection?.namespace, "default");
  } finally {
    Deno.removeSync(file);
  }
});

Deno.test("selectClusters() with --clusters all never makes a file dropped into the cluster folder the home cluster while a command-line one is selected", async () => {
  const file = kubeconfig(["zzz"]);
  const dropped = kubeconfig(["aaa"]);
  const dir = Deno.makeTempDirSync({ prefix: "cluster-selection-dir-" });
  try {
    Deno.copyFileSync(dropped, `${dir}/aaa.yaml`);
    const flags = parseFlags(["--kubeconfig", file, "--cluster-dir", dir, "--clusters", "all"]);
    const got = await selectClusters(flags, silentLogger());
    assert.deepEqual(got.selected.map((a) => a.name), ["aaa", "zzz"]);
    assert.equal(got.home?.name, "zzz");
    const alone = await selectClusters(parseFlags(["--cluster-dir", dir, "--clusters", "all"]), silentLogger());
    assert.equal(alone.home?.name, "aaa", "with nothing else selected it still can be");
  } finally {
    Deno.removeSync(file);
    Deno.removeSync(dropped);
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("selectClusters() turns what the user must fix into one-line UsageErrors", async () => {
  const file = kubeconfig(["one"]);
  const empty = kubeconfig([]);
  try {
    const cases: [string[], RegExp][] = [
      [["--kubeconfig", file, "--clusters", "nope"], /^unknown context "nope".*one/],
      [
        ["--kubeconfig", file, "--clusters", "all", "--leader-elect", "--leader-elect-cluster", "x"],
        /^invalid --leader-elect-cluster "x": choose one of the selected clusters \(one\)$/,
      ],
      [
        ["--kubeconfig", empty, "--clusters", "all", "--cluster-secrets", "ns"],
        /^--cluster-secrets needs a home cluster/,
      ],
      [["--kubeconfig", empty, "--clusters", "all", "--cluster-api", "ns"], /^--cluster-api needs a home cluster/],
    ];
    for (const [argv, message] of cases) {
      await assert.rejects(selectClusters(parseFlags(argv), silentLogger()), (err: Error) => {
        assert.ok(err instanceof UsageError, `${argv.join(" ")}: ${err}`);
        assert.match(err.message, message);
        assert.ok(!err.message.includes("\n"), "one line");
        return true;
      });
    }
  } finally {
    Deno.removeSync(file);
    Deno.removeSync(empty);
  }
});

// Tests of main()'s build steps on a hub that is built but never started (no cluster is contacted).

import assert from "node:assert/strict";
import { BUILT_IN_OPERATORS } from "../../operators/mod.ts";
import { Logger, silentLogger } from "../../util/mod.ts";
import { selectClusters } from "./cluster_selection.ts";
import { parseFlags } from "../flags/parse_flags.ts";
import { assembleHub, homeProviders, shardCoordinator } from "./hub_assembly.ts";
import { UsageError } from "../usage_error.ts";
import { kubeconfigFile } from "../../../dev/support/kubeconfig_file.ts";

const kubeconfig = (contexts: string[]) => kubeconfigFile(contexts, "hub-assembly-");

Deno.test("assembleHub() hosts the built-ins, the embedder's and the files' operators, in that order", async () => {
  const file = kubeconfig(["one"]);
  try {
    const flags = parseFlags(["--kubeconfig", file, "--clusters", "one"]);
    const clusters = await selectClusters(flags, silentLogger());
    const greeting = { ...BUILT_IN_OPERATORS.uuid({ homeCluster: "" }), name: "greeting" };
    const fromFile = { ...BUILT_IN_OPERATORS.uuid({ homeCluster: "" }), name: "from-file" };
    const { hub, hosted } = await assembleHub(
      flags,
      clusters,
      { embedded: [greeting], files: [fromFile] },
      silentLogger(),
    );
    assert.deepEqual(hosted.map((o) => o.name), [...Object.keys(BUILT_IN_OPERATORS), "greeting", "from-file"]);
    assert.deepEqual(hub.operators().sort(), hosted.map((o) => o.name).sort());
    assert.deepEqual(await homeProviders(flags, clusters, hub, silentLogger()), []);
    assert.equal(await shardCoordinator(flags, clusters.home, hub, silentLogger()), undefined);
  } finally {
    Deno.removeSync(file);
  }
});

Deno.test("assembleHub() leaves the mirror operator out, with a log line, when there is no home cluster", async () => {
  const file = kubeconfig(["one"]);
  try {
    const flags = parseFlags(["--kubeconfig", file, "--clusters", "one"]);
    // As when nothing selected is registered yet (a --cluster-dir waiting for its file).
    const clusters = { ...await selectClusters(flags, silentLogger()), home: undefined };
    const lines: string[] = [];
    const logger = new Logger({ level: "info", format: "json", write: (l) => lines.push(l) });
    const { hosted } = await assembleHub(flags, clusters, { embedded: [], files: [] }, logger);
    assert.deepEqual(hosted.map((o) => o.name), Object.keys(BUILT_IN_OPERATORS).filter((n) => n !== "mirror"));
    assert.ok(lines.some((l) => JSON.parse(l).msg.startsWith("the mirror operator does not run")), lines.join("\n"));
  } finally {
    Deno.removeSync(file);
  }
});

Deno.test("assembleHub() turns two operators of one name into a UsageError", async () => {
  const file = kubeconfig(["one"]);
  try {
    const flags = parseFlags(["--kubeconfig", file, "--clusters", "one", "--operators", "uuid"]);
    const clusters = await selectClusters(flags, silentLogger());
    const again = BUILT_IN_OPERATORS.uuid({ homeCluster: "" });
    await assert.rejects(
      () => assembleHub(flags, clusters, { embedded: [again], files: [] }, silentLogger()),
      (err: Error) => {
        assert.ok(err instanceof UsageError, String(err));
        assert.match(err.message, /uuid/);
        return true;
      },
    );
  } finally {
    Deno.removeSync(file);
  }
});

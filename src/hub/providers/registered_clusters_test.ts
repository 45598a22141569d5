// Tests of the start-up read of the registered set, on real kubeconfig files in a temporary folder (no cluster is
// contacted). The running registry is tested end to end in tests/providers/registered_clusters_test.ts.

import assert from "node:assert/strict";
import { join } from "node:path";
import { withTempDir } from "../../../dev/support/local_client.ts";
import { ConfigError } from "../../kube/mod.ts";
import { silentLogger } from "../../util/mod.ts";
import { loadRegisteredClusters, type RegisteredClustersOptions } from "./registered_clusters.ts";
import { kubeconfigText, type KubeUser } from "../../../dev/support/kubeconfig_text.ts";

/** A kubeconfig without a current context, each context on its own made-up server. */
function kubeconfig(contexts: string[], user: KubeUser = { token: "t" }): string {
  return kubeconfigText(contexts.map((name) => ({ name, server: `https://${name}.example:6443`, user })), "");
}

function load(cwd: string, over: Partial<RegisteredClustersOptions>) {
  return loadRegisteredClusters({ clusters: [], kubeconfigs: [], env: {}, cwd, logger: silentLogger(), ...over });
}

Deno.test("loadRegisteredClusters reads ./clusters by default and selects in --clusters order", () =>
  withTempDir(async (cwd) => {
    await Deno.mkdir(join(cwd, "clusters"));
    await Deno.writeTextFile(join(cwd, "clusters", "a.yaml"), kubeconfig(["prod", "dev"]));
    await Deno.writeTextFile(join(cwd, "clusters", "b.yaml"), kubeconfig(["staging"]));
    const r = await load(cwd, { clusters: ["staging", "prod"] });
    assert.equal(r.clusterDir, join(cwd, "clusters"));
    assert.deepEqual(r.selected.map((a) => a.name), ["staging", "prod"]);
    assert.equal(r.selected[1].server, "https://prod.example:6443");
    const all = await load(cwd, { clusters: ["all"] });
    assert.deepEqual(all.selected.map((a) => a.name), ["dev", "prod", "staging"], "all: sorted");
  }));

Deno.test("loadRegisteredClusters reads only the --kubeconfig files when given, with no cluster folder", () =>
  withTempDir(async (cwd) => {
    await Deno.mkdir(join(cwd, "clusters"));
    await Deno.writeTextFile(join(cwd, "clusters", "a.yaml"), kubeconfig(["ignored"]));
    await Deno.writeTextFile(join(cwd, "mine.yaml"), kubeconfig(["edge"]));
    const r = await load(cwd, { clusters: ["all"], kubeconfigs: ["mine.yaml"] });
    assert.equal(r.clusterDir, undefined);
    assert.deepEqual(r.selected.map((a) => a.name), ["edge"]);
  }));

Deno.test("loadRegisteredClusters throws ConfigError for an unknown name, listing the known ones, unless Secrets may register it", () =>
  withTempDir(async (cwd) => {
    await Deno.writeTextFile(join(cwd, "k.yaml"), kubeconfig(["prod", "dev"]));
    await assert.rejects(
      load(cwd, { clusters: ["prod2"], kubeconfigs: ["k.yaml"] }),
      (err: Error) =>
        err instanceof ConfigError &&
        err.message === 'unknown context "prod2" in --clusters; known contexts: dev, prod (or "all", "in-cluster")',
    );
    const waiting = await load(cwd, { clusters: ["prod", "later"], kubeconfigs: ["k.yaml"], clusterSecrets: "hub" });
    assert.deepEqual(waiting.selected.map((a) => a.name), ["prod"], "a name a Secret may register later waits");
  }));

Deno.test("loadRegisteredClusters throws ConfigError for a selected name defined twice, and for a missing --kubeconfig", () =>
  withTempDir(async (cwd) => {
    await Deno.writeTextFile(join(cwd, "a.yaml"), kubeconfig(["prod"]));
    await Deno.writeTextFile(join(cwd, "b.yaml"), kubeconfig(["prod"]));
    await assert.rejects(
      load(cwd, { clusters: ["prod"], kubeconfigs: ["a.yaml", "b.yaml"] }),
      (err: Error) => err instanceof ConfigError && /cluster "prod" is registered 2 times/.test(err.message),
    );
    await assert.rejects(
      load(cwd, { clusters: ["prod"], kubeconfigs: ["gone.yaml"] }),
      (err: Error) => err instanceof ConfigError && err.message.includes(join(cwd, "gone.yaml")),
    );
  }));

Deno.test("loadRegisteredClusters says where it looked when no context exists anywhere", () =>
  withTempDir(async (cwd) => {
    await Deno.writeTextFile(join(cwd, "empty.yaml"), kubeconfig([]));
    await assert.rejects(
      load(cwd, { clusters: ["all"], kubeconfigs: ["empty.yaml"] }),
      (err: Error) =>
        err instanceof ConfigError && err.message.includes("matched no context") &&
        err.message.includes(`no kubeconfig contexts were found (looked in ${join(cwd, "empty.yaml")})`),
    );
  }));

Deno.test("loadRegisteredClusters reads $KUBECONFIG without --kubeconfig, and a $KUBECONFIG file in the folder only once", () =>
  withTempDir(async (cwd) => {
    await Deno.mkdir(join(cwd, "clusters"));
    const inFolder = join(cwd, "clusters", "local.yaml");
    await Deno.writeTextFile(inFolder, kubeconfig(["prod"]));
    await Deno.writeTextFile(join(cwd, "other"), kubeconfig(["edge"]));
    const r = await load(cwd, { clusters: ["prod", "edge"], env: { KUBECONFIG: `${inFolder}:other:missing` } });
    assert.deepEqual(r.selected.map((a) => a.name), ["prod", "edge"], "prod is not registered twice");
  }));

Deno.test("loadRegisteredClusters trusts a --kubeconfig file even inside --cluster-dir (deno task demo) and holds the folder's other files to the credential policy, without exiting", () =>
  withTempDir(async (cwd) => {
    const dir = join(cwd, "clusters");
    await Deno.mkdir(dir);
    const tokenFile = join(cwd, "token");
    await Deno.writeTextFile(tokenFile, "hub-token\n");
    const withTokenFile = (names: string[]) => kubeconfig(names, { tokenFile });
    await Deno.writeTextFile(join(dir, "local.yaml"), withTokenFile(["prod"]));
    await Deno.writeTextFile(join(dir, "dropped.yaml"), withTokenFile(["dropped"]));
    const r = await load(cwd, { clusters: ["all"], kubeconfigs: [join(dir, "local.yaml")], clusterDir: dir });
    assert.deepEqual(r.selected.map((a) => a.name), ["prod"], "the dropped file's context is not served");
    assert.equal((await r.selected[0].auth()).headers.Authorization, "Bearer hub-token");
    const errors = r.registry.providerHealth().folder?.errors ?? [];
    assert.deepEqual(errors.map((e) => [e.source, e.cluster]), [[join(dir, "dropped.yaml"), "dropped"]]);
    assert.match(errors[0].error, /user field tokenFile names a file on the hub's own disk/);
    // Selected by name, the refused context is an error at start-up (exit 2), as any broken selected context is.
    await assert.rejects(
      load(cwd, { clusters: ["dropped"], kubeconfigs: [join(dir, "local.yaml")], clusterDir: dir }),
      (err: unknown) => err instanceof ConfigError && /tokenFile names a file/.test(err.message),
    );
  }));

// End-to-end: secondary watches open in a cluster only while an object needs them there, on prod, staging and dev,
// each behind a counting proxy.
// - Mirror (home prod): no copy watch runs in a cluster no Mirror targets; a Mirror targeting staging opens staging's
//   copy watches, a copy deleted by hand right after it was made (before that watch's first list was in) comes back,
//   a hand edit is undone; the Mirror deleted, the watches close.
// - The Website example (`owns`): no child watch runs in a cluster without a Website; a Website in staging opens
//   staging's, a child deleted by hand before their first list comes back; the Website deleted, they close.

import assert from "node:assert/strict";
import { localApi, waitFor } from "../dev/support/cluster_api.ts";
import { HubProcess } from "../dev/support/hub_process.ts";
import type { InterceptProxy } from "./support/intercept_proxy.ts";
import { adminKubeconfigVia, proxyInFrontOf } from "./support/local_proxy.ts";
import { applySharedCrd, kubectlOk, testNamespace } from "./support/mod.ts";

const CLUSTERS = ["prod", "staging", "dev"];
const via = (c: string) => `${c}-via-proxy`;
/** The copies' label selector, as the copy watches send it. */
const COPY_SELECTOR = "labelSelector=operator-hub.dev%2Fmirror%3Dcopy";
/**
 * How long a copy deleted by hand may take to come back. Through the requeue at the copy watch's first list it takes
 * about a second; without it, the Mirror's 60 s re-check would bring it back, past this bound.
 */
const RESTORE_GUARD_MS = 30_000;

const isCopyWatchOrList = (path: string, query: string) =>
  (path.endsWith("/configmaps") || path.endsWith("/secrets")) && query.includes(COPY_SELECTOR);

/**
 * A hub on prod, staging and dev, each behind a counting proxy, with staging's first list that `held` selects held
 * until `releaseList()`; `watching(i)` counts the watches `selects` open through cluster i's proxy now, `sent(i)` the
 * lists and watches it ever sent.
 */
async function proxiedHub(args: string[], selects: (path: string, query: string) => boolean) {
  const proxies: InterceptProxy[] = await Promise.all(CLUSTERS.map((c) => proxyInFrontOf(c)));
  const apis = CLUSTERS.map((c) => localApi(c));
  const dir = await Deno.makeTempDir({ prefix: "secondary-watches-" });
  const kubeconfigs = await Promise.all(CLUSTERS.map(async (c, i) => {
    const file = `${dir}/${c}.yaml`;
    await Deno.writeTextFile(file, adminKubeconfigVia(c, proxies[i].url, via(c)));
    return file;
  }));
  let released = false;
  let release!: () => void;
  const listReleased = new Promise<void>((r) => release = r);
  let listHeld!: () => void;
  const held = new Promise<void>((r) => listHeld = r);
  proxies[1].hook = async (req) => {
    if (req.method !== "GET" || req.query.get("watch") || released) return undefined;
    if (!req.path.endsWith("/configmaps") || !selects(req.path, `?${req.query}`)) return undefined;
    listHeld();
    await listReleased;
    return undefined;
  };
  const hub = HubProcess.start({ clusters: CLUSTERS.map(via), kubeconfigs, args });
  return {
    apis,
    hub,
    held,
    releaseList: () => {
      released = true;
      release();
    },
    watching: (i: number) => proxies[i].openStreams().filter((r) => selects(r.path, r.query)).length,
    sent: (i: number) => proxies[i].seen((r) => selects(r.path, r.query)).length,
    async close() {
      released = true;
      release();
      await hub.kill();
      await Promise.all(proxies.map((p) => p.close()));
      apis.forEach((a) => a.close());
      await Deno.remove(dir, { recursive: true });
    },
  };
}

Deno.test("A Mirror's copy watches run only in the clusters it targets: none before it, staging's from its creation (a copy deleted by hand before their first list comes back), none after it", async () => {
  const ns = await testNamespace("secondary-watches");
  // staging's first copy list is held until the copy was deleted by hand: the list then finds no copy, and only the
  // requeue at that list brings it back.
  const { apis, hub, held, releaseList, watching: copyWatches, sent: copyRequests, close } = await proxiedHub(
    ["--operators", "mirror", "--home-cluster", via("prod"), "--namespace", ns.name],
    isCopyWatchOrList,
  );
  try {
    await hub.waitReady();
    // Ready with no Mirror: no cluster listed or watched a copy.
    assert.deepEqual(CLUSTERS.map((_, i) => copyRequests(i)), [0, 0, 0], "copy lists or watches before any Mirror");

    await kubectlOk("prod", ["create", "configmap", "settings", "-n", ns.name, "--from-literal=color=blue"]);
    await kubectlOk("prod", ["apply", "-f", "-"], {
      stdin: JSON.stringify({
        apiVersion: "demo.operator/v1",
        kind: "Mirror",
        metadata: { name: "settings", namespace: ns.name },
        spec: { source: { kind: "ConfigMap", name: "settings" }, clusters: [via("staging")] },
      }),
    });
    await held;
    const copyPath = `/api/v1/namespaces/${ns.name}/configmaps/settings`;
    const first = await waitFor(() => apis[1].find(copyPath), "staging: the first copy", 30_000);
    await apis[1].request("DELETE", copyPath);
    releaseList();
    const again = await waitFor(
      async () => {
        const c = await apis[1].find(copyPath);
        return c && c.metadata.uid !== first.metadata.uid ? c : undefined;
      },
      "staging: the copy deleted by hand before the copy watch's first list is made again",
      RESTORE_GUARD_MS,
    );
    assert.equal(again.data.color, "blue");
    // A hand edit now reaches the running watch.
    await apis[1].request("PATCH", copyPath, { data: { color: "red" } }, {
      contentType: "application/merge-patch+json",
    });
    await waitFor(async () => (await apis[1].find(copyPath))?.data.color === "blue", "staging: hand edit undone");
    assert.deepEqual(
      [copyWatches(0), copyWatches(1), copyWatches(2)],
      [0, 2, 0],
      "copy watches (ConfigMaps and Secrets) open in staging only",
    );
    assert.equal(copyRequests(2), 0, "dev never listed or watched a copy");

    await apis[0].request("DELETE", `/apis/demo.operator/v1/namespaces/${ns.name}/mirrors/settings`);
    await waitFor(async () => !(await apis[1].find(copyPath)), "staging: the copy goes with its Mirror");
    await waitFor(() => copyWatches(1) === 0, "staging: its copy watches close once no Mirror targets it");
    console.log(
      `figure: copy lists and watches sent per cluster (prod, staging, dev): ${
        CLUSTERS.map((_, i) => copyRequests(i))
      }`,
    );
    assert.equal((await hub.stop("SIGTERM")).code, 0, hub.tail());
  } finally {
    await close();
    await ns.cleanup();
  }
});

const OWNED_SELECTOR = "labelSelector=operator-hub.dev%2Fparent-resource%3Dwebsites.examples.operator-hub.dev";
const isChildWatchOrList = (path: string, query: string) =>
  /\/(configmaps|deployments|services)$/.test(path) && query.includes(OWNED_SELECTOR);

Deno.test("A Website's child watches (owns) run only in clusters with a Website: none before it, staging's from its creation (a child deleted by hand before their first list comes back), none after it", async () => {
  const crd = new URL("../examples/website_crd.yaml", import.meta.url).pathname;
  await Promise.all(CLUSTERS.map(async (c) => {
    await applySharedCrd(c, crd);
    await kubectlOk(c, ["wait", "--for=condition=Established", "crd/websites.examples.operator-hub.dev"]);
  }));
  const ns = await testNamespace("secondary-owns");
  const { apis, hub, held, releaseList, watching: childWatches, sent: childRequests, close } = await proxiedHub(
    ["--namespace", ns.name, "--operators", "none", "examples/website_operator.ts"],
    isChildWatchOrList,
  );
  try {
    await hub.waitReady();
    assert.deepEqual(CLUSTERS.map((_, i) => childRequests(i)), [0, 0, 0], "child lists or watches before any Website");
    await kubectlOk("staging", ["apply", "-f", "-"], {
      stdin:
        `apiVersion: examples.operator-hub.dev/v1\nkind: Website\nmetadata:\n  name: site\n  namespace: ${ns.name}\n` +
        `spec:\n  image: web:1\n  content: hello\n`,
    });
    await held;
    const cmPath = `/api/v1/namespaces/${ns.name}/configmaps/site`;
    const first = await waitFor(() => apis[1].find(cmPath), "staging: site's ConfigMap", 30_000);
    await apis[1].request("DELETE", cmPath);
    releaseList();
    await waitFor(
      async () => {
        const c = await apis[1].find(cmPath);
        return c && c.metadata.uid !== first.metadata.uid ? c : undefined;
      },
      "staging: the ConfigMap deleted by hand before the child watch's first list is made again",
      RESTORE_GUARD_MS,
    );
    assert.deepEqual(
      [childWatches(0), childWatches(1), childWatches(2)],
      [0, 3, 0],
      "child watches (ConfigMaps, Deployments, Services) open in staging only",
    );
    assert.deepEqual([childRequests(0), childRequests(2)], [0, 0], "prod and dev never listed or watched a child");
    await apis[1].request("DELETE", `/apis/examples.operator-hub.dev/v1/namespaces/${ns.name}/websites/site`);
    await waitFor(() => childWatches(1) === 0, "staging: its child watches close once no Website is there");
    assert.equal((await hub.stop("SIGTERM")).code, 0, hub.tail());
  } finally {
    await close();
    await ns.cleanup();
  }
});

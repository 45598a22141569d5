// Tests of an engaged cluster's start order against the real local apiserver (context prod), in a namespace of the
// test's own: the first list runs while the pre-flight's access reviews do, and nothing is queued before they passed.
// The transport is the real one to the real apiserver; only the access reviews' answers are held back (or, to show a
// failed attempt, answered with a 500) by the test.

import assert from "node:assert/strict";
import { waitFor } from "../../../dev/support/cluster_api.ts";
import { KUBECONFIG_PATH } from "../../../dev/clusters/clusters.ts";
import { inLocalNamespace } from "../../../dev/support/local_client.ts";
import { type ClusterAccess, type FetchLike, loadContexts, type ResourceType } from "../../kube/mod.ts";
import { type QueuePriority, TokenBucket } from "../../queue/mod.ts";
import type { Operator } from "../../runtime/mod.ts";
import { silentLogger } from "../../util/mod.ts";
import { EngagedCluster } from "./engaged_cluster.ts";

/** Hang guard: a list and a few reviews on a local apiserver; 30 s is far above any run seen. */
const HANG_GUARD_MS = 30_000;

const CONFIGMAPS: ResourceType = { group: "", version: "v1", kind: "ConfigMap", plural: "configmaps" };

const maps: Operator = {
  name: "maps",
  resource: CONFIGMAPS,
  verbs: ["get"],
  events: false,
  uses: [],
  reconciler: { reconcile: () => Promise.resolve() },
};

/** What the test's transport saw, and how it answers the access reviews. */
interface Wire {
  /** `METHOD path?query` of every request sent, in order. */
  sent: string[];
  /** Access reviews sent and not answered yet. */
  held: number;
  /** Watch requests (`watch=true`) whose call has not been aborted yet. */
  openWatches: number;
  fetch: FetchLike;
}

/** The real transport, with every access review (SSAR or SSRR) answered only once `answer` settles, by its result. */
function wire(answer: (forward: () => Promise<Response>) => Promise<Response>): Wire {
  const w: Wire = {
    sent: [],
    held: 0,
    openWatches: 0,
    fetch: async (url, init) => {
      const u = new URL(url);
      w.sent.push(`${init.method ?? "GET"} ${u.pathname}${u.search}`);
      if (u.searchParams.get("watch") === "true") {
        w.openWatches++;
        const closed = () => w.openWatches--;
        if (init.signal?.aborted) closed();
        else init.signal?.addEventListener("abort", closed, { once: true });
      }
      if (!u.pathname.startsWith("/apis/authorization.k8s.io/")) return await fetch(url, init);
      w.held++;
      try {
        return await answer(() => fetch(url, init));
      } finally {
        w.held--;
      }
    },
  };
  return w;
}

async function engage(ns: string, w: Wire) {
  const [access]: ClusterAccess[] = (await loadContexts({ files: [KUBECONFIG_PATH] })).select(["prod"]);
  const changes: { keys: string[]; priority: QueuePriority }[] = [];
  const cluster = new EngagedCluster("prod", access, {
    operators: [maps],
    namespaces: [ns],
    onChange: (_operator, items: readonly unknown[], priority) => changes.push({ keys: items.map(keyOf), priority }),
    lookup: () => undefined,
    apiBudget: new TokenBucket(1_000, 1_000),
    fetch: w.fetch,
    logger: silentLogger(),
  });
  const ac = new AbortController();
  const running = cluster.start(ac.signal);
  const stop = async () => {
    ac.abort();
    await running;
  };
  return { cluster, changes, stop };
}

/** A queued key as `namespace/name`, whether the cluster hands out keys or requests. */
function keyOf(item: unknown): string {
  if (typeof item === "string") return item;
  const r = item as { namespace?: string; name: string };
  return `${r.namespace ?? ""}/${r.name}`;
}

const health = (c: EngagedCluster) => c.health(() => 0, 0, 60_000).operators.maps;

Deno.test("EngagedCluster lists an operator's resource while its access reviews run, and queues, shows or reconciles nothing before they passed", () =>
  inLocalNamespace("prod", "early-list", async (client, ns) => {
    for (const name of ["a", "b"]) {
      await client.request("POST", `/api/v1/namespaces/${ns}/configmaps`, { body: { metadata: { name } } });
    }
    let release!: () => void;
    const released = new Promise<void>((r) => release = r);
    const w = wire(async (forward) => {
      await released;
      return await forward();
    });
    const run = await engage(ns, w);
    try {
      await waitFor(
        () => w.held > 0 && (health(run.cluster)?.objects ?? 0) >= 2,
        "the list done while an access review is held",
        HANG_GUARD_MS,
        10,
      );
      assert.ok(
        w.sent.some((r) => r.startsWith(`GET /api/v1/namespaces/${ns}/configmaps`)),
        `listed: ${w.sent.join(", ")}`,
      );
      assert.equal(health(run.cluster)?.state, "connecting", "still in pre-flight");
      assert.equal(run.changes.length, 0, "nothing queued before the pre-flight passed");
      assert.equal(run.cluster.cachedObjects("maps").length, 0, "nothing shown to other clusters before it passed");

      release();
      await waitFor(
        () => run.changes.flatMap((c) => c.keys).filter((k) => k === `${ns}/a` || k === `${ns}/b`).length === 2,
        "both objects queued once the pre-flight passed",
        HANG_GUARD_MS,
        10,
      );
      assert.ok(run.changes.every((c) => c.priority === "low"), "what the list found is queued at low priority");
      assert.equal(run.cluster.cachedObjects("maps").length, health(run.cluster)?.objects);
      // One rules review for the one watched namespace answers every check of it.
      const reviews = w.sent.filter((r) => r.startsWith("POST /apis/authorization.k8s.io/"));
      assert.deepEqual(reviews, ["POST /apis/authorization.k8s.io/v1/selfsubjectrulesreviews"], reviews.join(", "));
    } finally {
      release();
      await run.stop();
    }
  }));

Deno.test("EngagedCluster: a failed pre-flight attempt stops the early watch and empties its cache; nothing is queued", () =>
  inLocalNamespace("prod", "early-fail", async (client, ns) => {
    await client.request("POST", `/api/v1/namespaces/${ns}/configmaps`, { body: { metadata: { name: "a" } } });
    let listed!: () => void;
    const wasListed = new Promise<void>((r) => listed = r);
    // Every review fails, the first only once the early list filled the cache.
    const w = wire(async () => {
      await wasListed;
      return new Response(
        JSON.stringify({ kind: "Status", apiVersion: "v1", status: "Failure", code: 500, message: "review refused" }),
        { status: 500, headers: { "content-type": "application/json" } },
      );
    });
    const run = await engage(ns, w);
    try {
      await waitFor(() => (health(run.cluster)?.objects ?? 0) >= 1, "the early list", HANG_GUARD_MS, 10);
      listed();
      await waitFor(
        () => /review refused/.test(health(run.cluster)?.lastError ?? ""),
        "the failed attempt shown",
        HANG_GUARD_MS,
        10,
      );
      await waitFor(() => w.openWatches === 0, "the early watch stopped", HANG_GUARD_MS, 10);
      assert.equal(health(run.cluster)?.objects, 0, "its cache emptied");
      assert.notEqual(health(run.cluster)?.state, "watching");
      assert.equal(run.changes.length, 0, "nothing queued");
    } finally {
      listed();
      await run.stop();
    }
  }));

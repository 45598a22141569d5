// Tests of one engaged cluster against the real local apiserver (context prod), watching a namespace of the test's own:
// pre-flight per operator, shared watches, per-operator health, and a clean stop.

import assert from "node:assert/strict";
import { waitFor } from "../../../dev/support/cluster_api.ts";
import { KUBECONFIG_PATH } from "../../../dev/clusters/clusters.ts";
import { inLocalNamespace } from "../../../dev/support/local_client.ts";
import { type ClusterAccess, loadContexts, type ResourceType } from "../../kube/mod.ts";
import { type QueuePriority, TokenBucket } from "../../queue/mod.ts";
import type { Operator, StoredObject } from "../../runtime/mod.ts";
import { silentLogger } from "../../util/mod.ts";
import { EngagedCluster } from "./engaged_cluster.ts";

/** Hang guard: a list and a watch on a local apiserver; 30 s is far above any run seen. */
const HANG_GUARD_MS = 30_000;

const CONFIGMAPS: ResourceType = { group: "", version: "v1", kind: "ConfigMap", plural: "configmaps" };
const NOPES: ResourceType = { group: "nope.operator-hub.dev", version: "v1", kind: "Nope", plural: "nopes" };

function operator(name: string, resource: ResourceType, over: Partial<Operator> = {}): Operator {
  return {
    name,
    resource,
    verbs: ["get"],
    events: false,
    uses: [],
    reconciler: { reconcile: () => Promise.resolve() },
    ...over,
  };
}

interface Run {
  cluster: EngagedCluster;
  changes: { operator: string; keys: string[]; priority: QueuePriority }[];
  /** Aborts the cluster and waits until `start` settled. */
  stop(): Promise<void>;
}

async function engage(ns: string, operators: Operator[]): Promise<Run> {
  const [access]: ClusterAccess[] = (await loadContexts({ files: [KUBECONFIG_PATH] })).select(["prod"]);
  const changes: Run["changes"] = [];
  const cluster = new EngagedCluster("prod", access, {
    operators,
    namespaces: [ns],
    // Written back as `namespace/name`, for readable assertions.
    onChange: (operator, requests, priority) =>
      changes.push({ operator, keys: requests.map((r) => `${r.namespace}/${r.name}`), priority }),
    lookup: () => undefined,
    apiBudget: new TokenBucket(1_000, 1_000),
    logger: silentLogger(),
  });
  const ac = new AbortController();
  const running = cluster.start(ac.signal);
  return {
    cluster,
    changes,
    stop: async () => {
      ac.abort();
      await running;
    },
  };
}

const health = (c: EngagedCluster) => c.health(() => 0, 0, 60_000);

Deno.test("EngagedCluster watches each operator's resource; a missing CRD marks only that operator, never the others", () =>
  inLocalNamespace("prod", "engaged", async (client, ns) => {
    await client.request("POST", `/api/v1/namespaces/${ns}/configmaps`, {
      body: { metadata: { name: "before", namespace: ns }, data: { a: "1" } },
    });
    const run = await engage(ns, [operator("maps", CONFIGMAPS), operator("nope", NOPES)]);
    try {
      await waitFor(() => health(run.cluster).operators.maps?.state === "watching", "maps watching", HANG_GUARD_MS);
      await waitFor(
        () => health(run.cluster).operators.nope?.state === "missing-crd",
        "nope missing-crd",
        HANG_GUARD_MS,
      );
      assert.equal(health(run.cluster).state, "missing-crd", "the cluster's state is its worst operator's");
      assert.ok(
        run.changes.some((c) => c.operator === "maps" && c.keys.includes(`${ns}/before`) && c.priority === "low"),
        "what the first list found waits behind live changes",
      );
      await client.request("POST", `/api/v1/namespaces/${ns}/configmaps`, {
        body: { metadata: { name: "after", namespace: ns } },
      });
      await waitFor(
        () => run.changes.some((c) => c.operator === "maps" && c.keys.includes(`${ns}/after`) && c.priority === "live"),
        "the new ConfigMap handed to onChange, live",
        HANG_GUARD_MS,
      );
      assert.deepEqual(run.cluster.cachedObjects("nope"), []);
      assert.ok(run.cluster.cachedObjects("maps").some((o) => o.metadata.name === "after"));
      assert.equal(run.cluster.target("unknown"), undefined);
    } finally {
      await run.stop();
    }
  }));

Deno.test("EngagedCluster: operators of one resource and projection share one cache; needsReconcile filters the keys", () =>
  inLocalNamespace("prod", "engaged-shared", async (client, ns) => {
    const wanted = (o: StoredObject) => (o as StoredObject & { data?: Record<string, string> }).data?.want === "yes";
    // Both keep the ConfigMap's data (the default projection keeps only metadata, spec and status).
    const project = (raw: Record<string, unknown>) => raw as unknown as StoredObject;
    const run = await engage(ns, [
      operator("all", CONFIGMAPS, { project }),
      operator("picky", CONFIGMAPS, { project, needsReconcile: wanted as Operator["needsReconcile"] }),
    ]);
    try {
      await waitFor(() => health(run.cluster).state === "watching", "both watching", HANG_GUARD_MS);
      for (const [name, want] of [["yes", "yes"], ["no", "no"]]) {
        await client.request("POST", `/api/v1/namespaces/${ns}/configmaps`, {
          body: { metadata: { name, namespace: ns }, data: { want } },
        });
      }
      const keysOf = (op: string) => run.changes.filter((c) => c.operator === op).flatMap((c) => c.keys);
      await waitFor(() => keysOf("all").includes(`${ns}/no`) && keysOf("all").includes(`${ns}/yes`), "both seen");
      assert.ok(keysOf("picky").includes(`${ns}/yes`));
      assert.equal(keysOf("picky").includes(`${ns}/no`), false, "needsReconcile kept it out");
      const h = health(run.cluster);
      // Namespaced kube-root-ca.crt is created in every namespace: count whatever is cached, once.
      assert.equal(h.objects, run.cluster.cachedObjects("all").length, "a shared cache is counted once");
      assert.equal(run.cluster.cachedObjects("all").length, run.cluster.cachedObjects("picky").length);
    } finally {
      await run.stop();
    }
  }));

Deno.test("EngagedCluster: an operator whose resourceClusters refuses this cluster has no missing-crd here", () =>
  inLocalNamespace("prod", "engaged-refused", async (_client, ns) => {
    const run = await engage(ns, [operator("elsewhere", NOPES, { resourceClusters: (c) => c !== "prod" })]);
    try {
      await waitFor(() => health(run.cluster).operators.elsewhere?.state === "watching", "watching", HANG_GUARD_MS);
      assert.equal(health(run.cluster).lastError, null);
    } finally {
      await run.stop();
    }
  }));

Deno.test("EngagedCluster.start settles once aborted, with its client closed: later requests fail", () =>
  inLocalNamespace("prod", "engaged-stop", async (_client, ns) => {
    const run = await engage(ns, [operator("maps", CONFIGMAPS)]);
    await waitFor(() => health(run.cluster).state === "watching", "watching", HANG_GUARD_MS);
    await run.stop();
    const client = run.cluster.target("maps")!.client;
    await assert.rejects(client.get({ namespace: ns, name: "x" }));
  }));

Deno.test("EngagedCluster at a closed port builds nothing per operator and sends no request: every operator shows the first contact's failure", async () => {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close(); // nobody listens there now
  const access: ClusterAccess = {
    name: "closed",
    server: `https://127.0.0.1:${port}`,
    source: "test",
    auth: () => Promise.resolve({ headers: { Authorization: "Bearer t" }, insecureSkipTlsVerify: false }),
  };
  let responses = 0;
  const cluster = new EngagedCluster("closed", access, {
    operators: [operator("maps", CONFIGMAPS), operator("nopes", NOPES)],
    namespaces: [],
    onChange: () => {},
    lookup: () => undefined,
    apiBudget: new TokenBucket(1_000, 1_000),
    logger: silentLogger(),
    onResponse: () => responses++,
  });
  const stop = new AbortController();
  const done = cluster.start(stop.signal);
  try {
    await waitFor(() => cluster.health(() => 0, 0, 60_000).state === "unreachable", "unreachable", HANG_GUARD_MS);
    const h = cluster.health(() => 0, 0, 60_000);
    assert.deepEqual(Object.keys(h.operators), ["maps", "nopes"]);
    assert.match(h.operators.nopes.lastError ?? "", /cannot connect to 127\.0\.0\.1:\d+/);
    assert.equal(cluster.target("maps"), undefined, "no reconcile target before the server answered");
    assert.equal(cluster.connection("maps", stop.signal), undefined);
    assert.equal(responses, 0, "not one HTTP request reached anything");
  } finally {
    stop.abort();
    await done;
  }
});

// Tests of a cluster's watches: mapping and grouping (pure), and real watches of ConfigMaps in the local prod cluster.
import assert from "node:assert/strict";
import { waitFor } from "../../../dev/support/cluster_api.ts";
import { inLocalNamespace } from "../../../dev/support/local_client.ts";
import type { KubeClient, ResourceType } from "../../kube/mod.ts";
import { objectKey, type Operator, type Request, Store, type StoredObject } from "../../runtime/mod.ts";
import { Logger, silentLogger, SystemClock } from "../../util/mod.ts";
import {
  metadataOnly,
  requestMapper,
  scopedWatchers,
  type WatchContext,
  watchOtherResources,
} from "./_watched_resources.ts";

/** Hang guard: a watch event from a local apiserver arrives in milliseconds; 20 s is far above any run seen. */
const HANG_GUARD_MS = 20_000;

const CONFIGMAPS: ResourceType = { group: "", version: "v1", kind: "ConfigMap", plural: "configmaps" };
const NAMESPACES: ResourceType = {
  group: "",
  version: "v1",
  kind: "Namespace",
  plural: "namespaces",
  namespaced: false,
};

function watchContext(client: KubeClient, namespaces: string[]): WatchContext {
  return { cluster: "prod", client, namespaces, clock: new SystemClock(), log: silentLogger() };
}

function configMap(namespace: string, name: string, labels: Record<string, string>) {
  return { apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace, labels }, data: { a: "1" } };
}

const obj = (name: string, labels: Record<string, string> = {}): Record<string, unknown> => ({
  metadata: { namespace: "ns", name, resourceVersion: "1", labels },
});

/** What an informer over `store` answers for a request. */
const over = (store: Store) => ({ cached: (r: Request) => store.get(objectKey(r)) });
/** The ConfigMap the requestMapper tests change. */
const CM: Request[] = [{ cluster: "prod", namespace: "ns", name: "cm" }];

Deno.test("requestMapper() returns what a key maps to now plus what it mapped to before, so an old target is reconciled once more", () => {
  const store = new Store(metadataOnly);
  const w = {
    type: CONFIGMAPS,
    map: (o: StoredObject, cluster: string): Request[] => [
      { cluster, namespace: "ns", name: o.metadata.labels?.target ?? "none" },
    ],
  };
  const map = requestMapper(w, over(store), "op", { cluster: "prod", log: silentLogger() }, () => []);
  store.upsert(obj("cm", { target: "a" }));
  assert.deepEqual(map(CM), [{ cluster: "prod", namespace: "ns", name: "a" }]);
  store.upsert(obj("cm", { target: "b" }));
  assert.deepEqual(map(CM).map((r) => r.name), ["a", "b"]);
  store.delete(obj("cm"));
  assert.deepEqual(map(CM).map((r) => r.name), ["b"], "a deleted object's last targets");
  assert.deepEqual(map(CM), [], "and nothing after that");
});

Deno.test("requestMapper() logs a map function that throws and counts it as mapping to nothing", () => {
  const lines: string[] = [];
  const log = new Logger({ level: "error", write: (line) => lines.push(line) });
  const store = new Store(metadataOnly);
  const w = {
    type: CONFIGMAPS,
    map: (o: StoredObject, _cluster: string, cached: (c: string) => StoredObject[]): Request[] => {
      if (o.metadata.labels?.broken) throw new Error("broken map");
      return cached("dev").map((c) => ({ cluster: "dev", namespace: "ns", name: c.metadata.name }));
    },
  };
  const cached = (c: string) => c === "dev" ? [{ metadata: { name: "u1" } } as StoredObject] : [];
  const map = requestMapper(w, over(store), "op", { cluster: "prod", log }, cached);
  store.upsert(obj("cm"));
  assert.deepEqual(map(CM), [{ cluster: "dev", namespace: "ns", name: "u1" }]);
  store.upsert(obj("cm", { broken: "yes" }));
  assert.deepEqual(map(CM), [{ cluster: "dev", namespace: "ns", name: "u1" }], "only the earlier target");
  assert.equal(lines.length, 1);
  assert.match(lines[0], /watch map function failed/);
  assert.match(lines[0], /"operator":"op"/);
  assert.match(lines[0], /"key":"ns\/cm"/);
});

Deno.test("metadataOnly() keeps labels and annotations, which map functions read, and drops the rest of the metadata", () => {
  const kept = metadataOnly({
    metadata: {
      name: "cm",
      namespace: "ns",
      labels: { app: "web" },
      annotations: { note: "x" },
      managedFields: [{ manager: "kubectl" }],
    },
    data: { a: "1" },
  });
  assert.equal(kept.metadata.labels?.app, "web");
  assert.equal(kept.metadata.annotations?.note, "x");
  assert.equal("managedFields" in kept.metadata, false);
});

Deno.test("scopedWatchers() makes one watcher per namespace, and one for a resource that is not namespaced", () => {
  const ctx = watchContext({} as KubeClient, ["a", "b"]);
  assert.equal(scopedWatchers(CONFIGMAPS, new Store(), () => {}, ctx).length, 2);
  assert.equal(scopedWatchers(NAMESPACES, new Store(), () => {}, ctx).length, 1);
  assert.equal(scopedWatchers(CONFIGMAPS, new Store(), () => {}, { ...ctx, namespaces: [] }).length, 1);
});

Deno.test("scopedWatchers() watch only the objects their label selector selects, in their namespace", () =>
  inLocalNamespace("prod", "scoped-watchers", async (client, namespace) => {
    const store = new Store(metadataOnly);
    const changed: string[] = [];
    const watchers = scopedWatchers(
      CONFIGMAPS,
      store,
      (keys) => changed.push(...keys),
      watchContext(client, [namespace]),
      "app=web",
    );
    const stop = new AbortController();
    const runs = watchers.map((w) => w.start(stop.signal));
    try {
      const path = `/api/v1/namespaces/${namespace}/configmaps`;
      await client.request("POST", path, { body: configMap(namespace, "other", { app: "db" }) });
      await client.request("POST", path, { body: configMap(namespace, "web", { app: "web" }) });
      await waitFor(() => store.get(`${namespace}/web`) !== undefined, "the web ConfigMap", HANG_GUARD_MS, 20);
      assert.deepEqual([...store.keys()], [`${namespace}/web`], "the db ConfigMap is not selected");
      assert.ok(changed.includes(`${namespace}/web`));
    } finally {
      stop.abort();
      await Promise.all(runs);
    }
  }));

Deno.test("watchOtherResources() queues what each change of a watched resource maps to, and skips watches that refuse the cluster", () =>
  inLocalNamespace("prod", "other-watches", async (client, namespace) => {
    const queued: Request[][] = [];
    const op = {
      name: "op",
      watches: [
        {
          type: CONFIGMAPS,
          labelSelector: "app=web",
          map: (o: StoredObject, cluster: string) => [{ cluster, namespace, name: o.metadata.labels?.target ?? "" }],
        },
        { type: CONFIGMAPS, clusters: (c: string) => c !== "prod", map: () => [] },
      ],
    } as unknown as Operator;
    const stop = new AbortController();
    const { watchers, runs } = watchOtherResources(op, watchContext(client, [namespace]), {
      cached: () => [],
      queue: (requests) => queued.push([...requests]),
      actingHere: () => [],
      count: () => 0,
    }, stop.signal);
    try {
      assert.equal(watchers.length, 1, "the watch refusing prod does not run there");
      assert.equal(runs.length, 1);
      const path = `/api/v1/namespaces/${namespace}/configmaps`;
      await client.request("POST", path, { body: configMap(namespace, "cm", { app: "web", target: "a" }) });
      await waitFor(() => queued.some((q) => q.length > 0), "a queued request", HANG_GUARD_MS, 20);
      assert.deepEqual(queued.flat(), [{ cluster: "prod", namespace, name: "a" }]);
    } finally {
      stop.abort();
      await Promise.all(runs);
    }
  }));

Deno.test("watchOtherResources() caches a watched resource through its own projection when it gives one (owner references for owns)", () =>
  inLocalNamespace("prod", "other-project", async (client, namespace) => {
    const seen: StoredObject[] = [];
    const op = {
      name: "op",
      watches: [{
        type: CONFIGMAPS,
        labelSelector: "app=web",
        project: (raw: Record<string, unknown>) => ({ metadata: { ...(raw.metadata as StoredObject["metadata"]) } }),
        map: (o: StoredObject) => {
          seen.push(o);
          return [];
        },
      }],
    } as unknown as Operator;
    const stop = new AbortController();
    const { runs } = watchOtherResources(op, watchContext(client, [namespace]), {
      cached: () => [],
      queue: () => {},
      actingHere: () => [],
      count: () => 0,
    }, stop.signal);
    try {
      const path = `/api/v1/namespaces/${namespace}/configmaps`;
      await client.request("POST", path, { body: configMap(namespace, "cm", { app: "web" }) });
      await waitFor(() => seen.length > 0, "the mapped change", HANG_GUARD_MS, 20);
      const meta = seen[0].metadata as unknown as Record<string, unknown>;
      assert.equal(typeof meta.creationTimestamp, "string", "the watch's own projection, not metadataOnly, kept it");
    } finally {
      stop.abort();
      await Promise.all(runs);
    }
  }));

Deno.test("watchOtherResources() with `objects` watches and caches only the named objects, following refresh()", () =>
  inLocalNamespace("prod", "per-object-watches", async (client, namespace) => {
    const path = `/api/v1/namespaces/${namespace}/configmaps`;
    for (const name of ["wanted", "other-1", "other-2", "later"]) {
      await client.request("POST", path, { body: configMap(namespace, name, {}) });
    }
    let named = ["wanted"];
    const queued: Request[] = [];
    const op = {
      name: "op",
      watches: [{
        type: CONFIGMAPS,
        objects: () => named.map((name) => ({ namespace, name })),
        map: (o: StoredObject): Request[] => [{ cluster: "prod", namespace, name: `for-${o.metadata.name}` }],
      }],
    } as unknown as Operator;
    const stop = new AbortController();
    const others = watchOtherResources(op, watchContext(client, []), {
      cached: () => [],
      queue: (r) => queued.push(...r),
      actingHere: () => [],
      count: () => 0,
    }, stop.signal);
    const cachedKeys = () => others.watchers.flatMap((w) => [...w.store.keys()]).sort();
    try {
      await waitFor(() => cachedKeys().length === 1, "the named ConfigMap cached", HANG_GUARD_MS, 20);
      assert.deepEqual(cachedKeys(), [`${namespace}/wanted`], "nothing else of the namespace is cached");
      assert.deepEqual(queued.map((r) => r.name), ["for-wanted"]);
      named = ["later"];
      others.refresh();
      await waitFor(() => cachedKeys().join() === `${namespace}/later`, "the watch moved", HANG_GUARD_MS, 20);
      assert.equal(others.watchers.length, 1, "the watch of an object no longer named stopped");
      await client.request("PATCH", `${path}/later`, {
        body: { data: { a: "2" } },
        contentType: "application/merge-patch+json",
      });
      await waitFor(() => queued.filter((r) => r.name === "for-later").length >= 2, "the change", HANG_GUARD_MS, 20);
    } finally {
      stop.abort();
      await Promise.all(others.runs);
    }
  }));

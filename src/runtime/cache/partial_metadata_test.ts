// Tests of metadata-only watches: the projection (pure), and a Watcher listing and watching ConfigMaps in the local prod
// cluster as PartialObjectMetadata.
import assert from "node:assert/strict";
import { waitFor } from "../../../dev/support/cluster_api.ts";
import { inLocalNamespace } from "../../../dev/support/local_client.ts";
import type { WatchEvent } from "../../kube/mod.ts";
import { silentLogger, SystemClock } from "../../util/mod.ts";
import {
  type MetadataListWatchClient,
  metadataOnlyClient,
  metadataProjection,
  type PartialObjectMetadata,
  partialObjectMetadata,
} from "./partial_metadata.ts";
import { LAST_APPLIED_ANNOTATION, Store } from "./store.ts";
import { Watcher } from "./watcher.ts";

/** Hang guard: a watch event from a local apiserver arrives in milliseconds; 20 s is far above any run seen. */
const HANG_GUARD_MS = 20_000;

const FULL_CONFIG_MAP = {
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: {
    name: "settings",
    namespace: "web",
    uid: "u-1",
    resourceVersion: "812",
    creationTimestamp: "2026-12-04T18:00:00Z",
    labels: { app: "web" },
    annotations: { note: "kept", [LAST_APPLIED_ANNOTATION]: '{"data":{"password":"x"}}' },
    ownerReferences: [{ apiVersion: "v1", kind: "Pod", name: "p", uid: "u-0", controller: true }],
    finalizers: ["example.com/keep"],
    managedFields: [{ manager: "kubectl" }],
  },
  data: { password: "hunter2" },
  binaryData: { blob: "AAAA" },
  immutable: false,
};

Deno.test("partialObjectMetadata() reduces a full object (an older server's answer) to its metadata, typed as PartialObjectMetadata", () => {
  const store = new Store(metadataProjection());
  store.upsert(FULL_CONFIG_MAP);
  const kept = store.get("web/settings") as PartialObjectMetadata;
  assert.deepEqual(kept, {
    apiVersion: "meta.k8s.io/v1",
    kind: "PartialObjectMetadata",
    metadata: {
      name: "settings",
      namespace: "web",
      uid: "u-1",
      resourceVersion: "812",
      generation: undefined,
      creationTimestamp: "2026-12-04T18:00:00Z",
      labels: { app: "web" },
      annotations: { note: "kept" },
      ownerReferences: [{ apiVersion: "v1", kind: "Pod", name: "p", uid: "u-0", controller: true }],
      finalizers: ["example.com/keep"],
    },
  });
  assert.doesNotMatch(JSON.stringify(kept), /hunter2|AAAA|password|managedFields/);
});

Deno.test("partialObjectMetadata() keeps a server's PartialObjectMetadata as it is, without labels it does not have", () => {
  const served = {
    apiVersion: "meta.k8s.io/v1",
    kind: "PartialObjectMetadata",
    metadata: { name: "a", namespace: "ns", uid: "u", resourceVersion: "5" },
  };
  const kept = partialObjectMetadata(served);
  assert.deepEqual(kept, { ...served, metadata: { ...served.metadata, generation: undefined } });
  assert.equal("labels" in kept.metadata, false);
});

Deno.test("metadataProjection(project) gives `project` the PartialObjectMetadata, never the full object", () => {
  const seen: unknown[] = [];
  const project = metadataProjection((o) => {
    seen.push(o);
    return { metadata: { name: o.metadata.name, resourceVersion: o.metadata.resourceVersion } };
  });
  assert.deepEqual(project(FULL_CONFIG_MAP), { metadata: { name: "settings", resourceVersion: "812" } });
  assert.equal((seen[0] as PartialObjectMetadata).kind, "PartialObjectMetadata");
  assert.equal("data" in (seen[0] as object), false);
});

Deno.test("metadataOnlyClient() lists and watches ConfigMaps of a real apiserver as PartialObjectMetadata: no data on the wire or in the store", () =>
  inLocalNamespace("prod", "metadata-watch", async (client, namespace) => {
    const path = `/api/v1/namespaces/${namespace}/configmaps`;
    const body = (name: string, value: string) => ({ metadata: { name, labels: { app: "web" } }, data: { value } });
    await client.request("POST", path, { body: body("listed", "secret-listed") });
    // What the server sent, before any projection: every item and event object's kind and whether it held data. Only
    // the test's own ConfigMaps: the controller manager adds kube-root-ca.crt to a new namespace whenever it gets to it.
    const served: string[] = [];
    const withData: string[] = []; // anything at all the server sent with data
    const ours = (o: { metadata?: { name?: string } }) => ["listed", "watched"].includes(o.metadata?.name ?? "");
    const recording: MetadataListWatchClient = {
      listPage: async (p, o) => {
        const page = await client.listPage(p, o);
        for (const i of page.items as Record<string, unknown>[]) {
          if ("data" in i) withData.push(`list ${JSON.stringify(i.metadata)}`);
          if (ours(i)) served.push(`list ${i.kind} data=${"data" in i}`);
        }
        return page;
      },
      watch: async function* (p, o) {
        for await (const ev of client.watch(p, o) as AsyncIterable<WatchEvent>) {
          if ("data" in ev.object) withData.push(`${ev.type} ${ev.object.metadata?.name}`);
          if (ev.type !== "BOOKMARK" && ours(ev.object)) {
            served.push(`${ev.type} ${ev.object.metadata.name} ${ev.object.kind} data=${"data" in ev.object}`);
          }
          yield ev;
        }
      },
    };
    const store = new Store(metadataProjection());
    const changed: string[] = [];
    const watcher = new Watcher({
      path,
      namespace,
      client: metadataOnlyClient(recording),
      store,
      onChange: (keys) => changed.push(...keys),
      clock: new SystemClock(),
      logger: silentLogger(),
    });
    const stop = new AbortController();
    const run = watcher.start(stop.signal);
    try {
      await waitFor(() => store.get(`${namespace}/listed`), "the listed ConfigMap", HANG_GUARD_MS, 20);
      await client.request("POST", path, { body: body("watched", "secret-watched") });
      await waitFor(() => store.get(`${namespace}/watched`), "the watched ConfigMap", HANG_GUARD_MS, 20);
      const before = store.get(`${namespace}/watched`)!.metadata.resourceVersion;
      await client.request("PATCH", `${path}/watched`, { body: { data: { value: "changed" } } });
      await waitFor(
        () => store.get(`${namespace}/watched`)!.metadata.resourceVersion !== before,
        "a change of data alone seen by the metadata-only watch",
        HANG_GUARD_MS,
        20,
      );
      assert.ok(served.includes("list PartialObjectMetadata data=false"), served.join("; "));
      assert.deepEqual(withData, []);
      assert.deepEqual(
        served.filter((s) => !s.startsWith("list")),
        ["ADDED watched PartialObjectMetadata data=false", "MODIFIED watched PartialObjectMetadata data=false"],
      );
      for (const key of store.keys()) {
        const o = store.get(key)!;
        assert.equal(o.kind, "PartialObjectMetadata");
        assert.equal(o.apiVersion, "meta.k8s.io/v1");
        assert.deepEqual(Object.keys(o).sort(), ["apiVersion", "kind", "metadata"]);
        if (!key.endsWith("/kube-root-ca.crt")) assert.deepEqual(o.metadata.labels, { app: "web" }, key);
      }
      assert.doesNotMatch(JSON.stringify([...store.keys()].map((k) => store.get(k))), /secret-|changed/);
      assert.ok(changed.includes(`${namespace}/watched`));
    } finally {
      stop.abort();
      await run;
    }
  }));

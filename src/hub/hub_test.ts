// Unit tests of the Hub in-process: an injected transport plays each cluster's API, time is virtual.

import assert from "node:assert/strict";
import type { ClusterAccess, ClusterAuth, FetchLike } from "../kube/mod.ts";
import type { Operator, Request } from "../runtime/mod.ts";
import { silentLogger, VirtualClock } from "../util/mod.ts";
import { Hub } from "./hub.ts";

const UUIDS = { group: "demo.operator", version: "v1", kind: "Uuid", plural: "uuid" };
const GREETINGS = { group: "examples.operator-hub.dev", version: "v1", kind: "Greeting", plural: "greetings" };

/** One cluster's API as the transport answers it: discovery, access reviews, lists and watches that stay open. */
class ScriptedCluster implements ClusterAccess {
  readonly source = "test";
  readonly server: string;
  readonly groups = new Map<string, string[]>();
  readonly items = new Map<string, Record<string, unknown>[]>();
  openWatches = 0;
  readonly patches: string[] = [];
  /** The Lease `ns/hub`, as GET answers it; PUT and POST replace it. */
  lease: Record<string, unknown> | undefined;

  constructor(readonly name: string) {
    this.server = `https://${name}.invalid:6443`;
  }

  serve(type: { group: string; version: string; plural: string }, names: string[]): this {
    this.groups.set(`${type.group}/${type.version}`, [type.plural, `${type.plural}/status`]);
    this.items.set(
      type.plural,
      names.map((name, i) => ({ metadata: { name, namespace: "ns", resourceVersion: `${i + 1}` } })),
    );
    return this;
  }

  auth(): Promise<ClusterAuth> {
    return Promise.resolve({ headers: {}, insecureSkipTlsVerify: false });
  }

  respond(
    path: string,
    query: URLSearchParams,
    method: string,
    signal?: AbortSignal | null,
    body?: unknown,
  ): Response {
    if (path.startsWith("/apis/coordination.k8s.io/v1/namespaces/ns/leases")) {
      if (method === "GET") return this.lease ? json(200, this.lease) : json(404, { code: 404 });
      const sent = JSON.parse(String(body));
      this.lease = { ...sent, metadata: { ...sent.metadata, resourceVersion: String(Math.random()) } };
      return json(method === "POST" ? 201 : 200, this.lease);
    }
    const discovery = path.match(/^\/apis\/([^/]+\/[^/]+)$/);
    if (discovery) {
      const resources = this.groups.get(discovery[1]);
      return resources ? json(200, { resources: resources.map((name) => ({ name })) }) : json(404, { code: 404 });
    }
    if (method === "POST" && path.endsWith("/selfsubjectaccessreviews")) {
      return json(201, { status: { allowed: true } });
    }
    if (method === "PATCH") {
      this.patches.push(path);
      return json(200, {});
    }
    const plural = path.split("/").at(-1)!;
    if (query.get("watch") === "true") {
      this.openWatches++;
      const body = new ReadableStream<Uint8Array>({
        start: (controller) => {
          const close = () => {
            this.openWatches--;
            try {
              controller.error(signal?.reason ?? new Error("aborted"));
            } catch { /* already closed */ }
          };
          if (signal?.aborted) close();
          else signal?.addEventListener("abort", close, { once: true });
        },
      });
      return new Response(body, { status: 200, headers: { "content-type": "application/json" } });
    }
    return json(200, { metadata: { resourceVersion: "100" }, items: this.items.get(plural) ?? [] });
  }
}

function json(status: number, body: unknown): Response {
  return new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });
}

/** A transport that sends each request to the scripted cluster its URL names. */
function transport(clusters: ScriptedCluster[]): FetchLike {
  return (url, init) => {
    const u = new URL(url);
    const cluster = clusters.find((c) => c.server === u.origin);
    if (!cluster) return Promise.reject(new TypeError(`no scripted cluster at ${u.origin}`));
    return Promise.resolve(cluster.respond(u.pathname, u.searchParams, init.method ?? "GET", init.signal, init.body));
  };
}

function recordingOperator(name: string, resource: typeof UUIDS, seen: string[]): Operator {
  return {
    name,
    resource,
    verbs: ["patchStatus"],
    events: false,
    uses: [],
    reconciler: {
      reconcile: (req: Request) => {
        seen.push(`${name} ${req.cluster}/${req.namespace}/${req.name}`);
        return Promise.resolve();
      },
    },
  };
}

function setup(options: { leaderElection?: boolean } = {}) {
  const clock = new VirtualClock(1_000_000);
  const one = new ScriptedCluster("one").serve(UUIDS, ["u1", "u2"]).serve(GREETINGS, ["g1"]);
  const two = new ScriptedCluster("two").serve(UUIDS, ["u3"]); // no Greeting CRD
  const seen: string[] = [];
  const hub = new Hub({
    operators: [recordingOperator("uuid", UUIDS, seen), recordingOperator("greeting", GREETINGS, seen)],
    clock,
    fetch: transport([one, two]),
    logger: silentLogger(),
    ...(options.leaderElection
      ? { leaderElection: { cluster: "one", access: one, namespace: "ns", name: "hub", identity: "me" } }
      : {}),
  });
  const stop = new AbortController();
  return { clock, one, two, seen, hub, stop };
}

/** Engages both clusters, starts the hub and lets it list; `finish()` shuts it down and waits until it stopped. */
async function started(options: { leaderElection?: boolean } = {}) {
  const t = setup(options);
  await t.hub.engage("one", t.one);
  await t.hub.engage("two", t.two);
  const running = t.hub.start(t.stop.signal);
  // Steps, not one jump: the pre-flight's access reviews run one after another, each a few promise hops.
  for (let i = 0; i < 10; i++) await t.clock.advance(100);
  const finish = async () => {
    t.stop.abort();
    await t.clock.advance(20_000);
    await running;
  };
  return { ...t, finish };
}

Deno.test("Hub runs every operator in every engaged cluster, and a CRD missing in one cluster makes only that operator missing-crd there", async () => {
  const t = await started();
  try {
    assert.deepEqual(t.seen.toSorted(), [
      "greeting one/ns/g1",
      "uuid one/ns/u1",
      "uuid one/ns/u2",
      "uuid two/ns/u3",
    ]);
    const h = t.hub.health();
    assert.equal(h.clusters.one.state, "watching");
    assert.deepEqual(Object.keys(h.clusters.one.operators).sort(), ["greeting", "uuid"]);
    assert.equal(h.clusters.two.operators.uuid.state, "watching");
    assert.equal(h.clusters.two.operators.greeting.state, "missing-crd");
    assert.match(h.clusters.two.operators.greeting.lastError ?? "", /does not serve Greeting/);
    assert.equal(h.clusters.two.state, "missing-crd", "a cluster's state is the worst of its operators'");
    assert.equal(h.ready, false);
    assert.deepEqual(h.notReady, ["two"]);
    assert.equal(h.status, "degraded");
    assert.equal(h.clusters.one.objects, 3);
    assert.equal(t.one.openWatches, 2, "one watch per resource in cluster one");
    assert.equal(t.two.openWatches, 1, "no watch for the missing resource");
  } finally {
    await t.finish();
  }
  assert.equal(t.one.openWatches + t.two.openWatches, 0, "every watch closed after shutdown");
});

Deno.test("Hub.disengage() closes the cluster's watches and drops it from health while the others keep running", async () => {
  const t = await started();
  try {
    assert.equal(t.one.openWatches, 2);
    assert.equal(t.hub.metrics.reconcileTotal.value("uuid", "one", "success"), 2);
    const gone = t.hub.disengage("one");
    await t.clock.advance(100);
    await gone;
    assert.equal(t.one.openWatches, 0);
    assert.deepEqual(Object.keys(t.hub.health().clusters), ["two"]);
    assert.equal(t.two.openWatches, 1);
    assert.equal(
      t.hub.metrics.reconcileTotal.value("uuid", "one", "success"),
      0,
      "series of a disengaged cluster dropped",
    );
    assert.equal(t.hub.metrics.reconcileTotal.value("uuid", "two", "success"), 1);
  } finally {
    await t.finish();
  }
});

Deno.test("Hub.register() refuses a second operator of the same name and any operator once running", async () => {
  const t = setup();
  assert.throws(() => t.hub.register(recordingOperator("uuid", UUIDS, [])), /already registered/);
  assert.throws(() => t.hub.register(recordingOperator("Bad/Name", UUIDS, [])), /invalid operator name/);
  const running = t.hub.start(t.stop.signal);
  assert.throws(() => t.hub.register(recordingOperator("later", UUIDS, [])), /already running/);
  t.stop.abort();
  await t.clock.advance(20_000);
  await running;
});

Deno.test("Hub with leader election reconciles nothing while another replica holds the Lease, then every operator's objects once it takes over", async () => {
  const lease = (holder: string) => ({
    apiVersion: "coordination.k8s.io/v1",
    kind: "Lease",
    metadata: { name: "hub", namespace: "ns", resourceVersion: "1" },
    spec: { holderIdentity: holder, leaseDurationSeconds: 15, renewTime: "2026-01-01T00:00:00.000000Z" },
  });
  const t = setup({ leaderElection: true });
  t.one.lease = lease("other");
  await t.hub.engage("one", t.one);
  await t.hub.engage("two", t.two);
  const running = t.hub.start(t.stop.signal);
  try {
    await t.clock.advance(5_000);
    assert.equal(t.hub.leading, false);
    assert.deepEqual(t.seen, [], "a standby reconciles nothing");
    assert.equal(t.hub.health().clusters.one.operators.uuid.state, "watching", "a standby keeps watching");
    assert.equal(t.hub.health().leaderElection?.leader, false);
    // The other replica stops renewing: 15 s after this one first saw the record, it takes over.
    await t.clock.advance(15_000);
    assert.equal(t.hub.leading, true);
    assert.deepEqual(t.seen.toSorted(), ["greeting one/ns/g1", "uuid one/ns/u1", "uuid one/ns/u2", "uuid two/ns/u3"]);
    assert.equal((t.one.lease as { spec: { holderIdentity: string } }).spec.holderIdentity, "me");
  } finally {
    t.stop.abort();
    await t.clock.advance(20_000);
    await running;
  }
});

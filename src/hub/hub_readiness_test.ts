// Unit tests of the Hub's readiness rule and of what it shows of untrusted clusters' connection errors, in-process:
// an injected transport answers for the clusters that are up and refuses for those that are down; time is virtual.

import assert from "node:assert/strict";
import type { ClusterAccess, ClusterAuth, FetchLike } from "../kube/mod.ts";
import type { Operator } from "../runtime/mod.ts";
import { Logger, silentLogger, VirtualClock } from "../util/mod.ts";
import { Hub, type HubReadiness } from "./hub.ts";
import type { ClusterRegistration } from "./health/hub_health.ts";
import { CANNOT_CONNECT } from "./cluster/_untrusted_errors.ts";

const UUIDS = { group: "demo.operator", version: "v1", kind: "Uuid", plural: "uuid" };
/** What a refused connection looks like from Deno's fetch: the detail a port scanner would want. */
const REFUSED = "tcp connect error: Connection refused (os error 111) to 10.9.8.7:2379";

function access(name: string): ClusterAccess {
  return {
    name,
    server: `https://${name}.invalid:6443`,
    source: "test",
    auth: (): Promise<ClusterAuth> => Promise.resolve({ headers: {}, insecureSkipTlsVerify: false }),
  };
}

/** Answers every request for the clusters in `up` as a small healthy API server; refuses the others. */
function transport(up: Set<string>): FetchLike {
  const json = (status: number, body: unknown) =>
    new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });
  return (url, init) => {
    const u = new URL(url);
    if (!up.has(u.hostname.replace(/\.invalid$/, ""))) return Promise.reject(new TypeError(REFUSED));
    if (u.pathname === "/apis/demo.operator/v1") return Promise.resolve(json(200, { resources: [{ name: "uuid" }] }));
    if (u.pathname.endsWith("/selfsubjectaccessreviews")) {
      return Promise.resolve(json(201, { status: { allowed: true } }));
    }
    if (u.searchParams.get("watch") === "true") {
      const body = new ReadableStream<Uint8Array>({
        start: (c) => init.signal?.addEventListener("abort", () => c.error(new Error("aborted")), { once: true }),
      });
      return Promise.resolve(new Response(body, { status: 200 }));
    }
    return Promise.resolve(json(200, { metadata: { resourceVersion: "1" }, items: [] }));
  };
}

const uuid: Operator = {
  name: "uuid",
  resource: UUIDS,
  verbs: [],
  events: false,
  uses: [],
  reconciler: { reconcile: () => Promise.resolve() },
};

const registered = (provider: string, extra: Partial<ClusterRegistration> = {}): ClusterRegistration => ({
  provider,
  registeredAt: "2026-01-01T00:00:00.000Z",
  ...extra,
});

/** A started hub over `clusters` (name → registration, or undefined for an embedder's own); `up` answer. */
async function running(
  clusters: Record<string, ClusterRegistration | undefined>,
  up: string[],
  options: { readiness?: HubReadiness; logger?: Logger } = {},
) {
  const clock = new VirtualClock(1_000_000);
  const hub = new Hub({
    operators: [uuid],
    clock,
    fetch: transport(new Set(up)),
    logger: options.logger ?? silentLogger(),
    readiness: options.readiness,
  });
  for (const [name, r] of Object.entries(clusters)) await hub.engage(name, access(name), r);
  const stop = new AbortController();
  const done = hub.start(stop.signal);
  for (let i = 0; i < 20; i++) await clock.advance(50);
  return {
    hub,
    async finish() {
      stop.abort();
      await clock.advance(20_000);
      await done;
    },
  };
}

Deno.test("Hub is ready while a Secret's, a folder file's, a ClusterProfile's and a Cluster API cluster are unreachable, and names only the command line's in notReady", async () => {
  const t = await running({
    prod: registered("flag"),
    "r-closed": registered("secret"),
    dropped: registered("folder"),
    "team/edge": registered("cluster-profile"),
    "capi/one": registered("cluster-api"),
  }, ["prod"]);
  try {
    const h = t.hub.health();
    assert.equal(h.clusters["r-closed"].state, "unreachable");
    assert.equal(h.clusters["capi/one"].state, "unreachable");
    assert.equal(h.clusters.prod.state, "watching");
    assert.equal(h.ready, true, JSON.stringify(h.notReady));
    assert.equal(h.notReady, undefined);
    assert.equal(h.status, "degraded", "their state still shows");
    assert.equal(h.clusters.prod.gatesReadiness, true);
    for (const n of ["r-closed", "dropped", "team/edge", "capi/one"]) assert.equal(h.clusters[n].gatesReadiness, false);
  } finally {
    await t.finish();
  }
});

Deno.test("Hub holds readiness back for an unreachable cluster of the command line, the embedder's own, the home cluster and a name --clusters lists", async () => {
  const t = await running(
    {
      prod: registered("flag"),
      kubeconfig: registered("folder", { commandLine: true }),
      embedded: undefined,
      home: registered("secret"),
      named: registered("secret"),
      other: registered("secret"),
    },
    [],
    { readiness: { home: "home", named: ["named"] } },
  );
  try {
    const h = t.hub.health();
    assert.equal(h.ready, false);
    assert.deepEqual(h.notReady, ["embedded", "home", "kubeconfig", "named", "prod"]);
  } finally {
    await t.finish();
  }
});

Deno.test("Hub with readiness clusters `all` holds readiness back for every registered cluster, as before", async () => {
  const t = await running({ prod: registered("flag"), "r-closed": registered("secret") }, ["prod"], {
    readiness: { clusters: "all" },
  });
  try {
    const h = t.hub.health();
    assert.equal(h.ready, false);
    assert.deepEqual(h.notReady, ["r-closed"]);
    assert.equal(h.clusters["r-closed"].gatesReadiness, true);
    assert.equal(h.clusters["r-closed"].lastError, CANNOT_CONNECT, "readiness does not make a cluster trusted");
  } finally {
    await t.finish();
  }
});

Deno.test("Hub shows an untrusted cluster's connection failure as one generic reason, and a command-line cluster's in full", async () => {
  const t = await running({ prod: registered("flag"), "r-closed": registered("secret") }, [], {
    readiness: { named: ["r-closed"] },
  });
  try {
    const h = t.hub.health();
    const untrusted = h.clusters["r-closed"];
    assert.equal(untrusted.state, "unreachable");
    assert.equal(untrusted.lastError, CANNOT_CONNECT);
    assert.equal(untrusted.operators.uuid.lastError, CANNOT_CONNECT);
    assert.ok(!JSON.stringify(untrusted).includes("refused"), JSON.stringify(untrusted));
    assert.ok(!JSON.stringify(untrusted).includes("2379"), "no port's state");
    assert.match(h.clusters.prod.lastError ?? "", /Connection refused/);
    assert.match(h.clusters.prod.operators.uuid.lastError ?? "", /Connection refused/);
  } finally {
    await t.finish();
  }
});

Deno.test("Hub logs an untrusted cluster's connection failures with the generic reason, the detail at debug only", async () => {
  const lines: Record<string, unknown>[] = [];
  const logger = new Logger({ level: "debug", write: (l) => lines.push(JSON.parse(l)) });
  const t = await running({ prod: registered("flag"), "r-closed": registered("secret") }, [], { logger });
  await t.finish();
  const of = (cluster: string) => lines.filter((l) => l.cluster === cluster && l.error !== undefined);
  const untrusted = of("r-closed");
  assert.ok(untrusted.some((l) => l.level !== "debug"), JSON.stringify(untrusted));
  for (const l of untrusted.filter((l) => l.level !== "debug")) {
    assert.equal(l.error, CANNOT_CONNECT, JSON.stringify(l));
  }
  assert.ok(untrusted.some((l) => l.level === "debug" && String(l.error).includes("Connection refused")));
  const trusted = of("prod").filter((l) => l.level !== "debug");
  assert.ok(trusted.length > 0 && trusted.every((l) => String(l.error).includes("Connection refused")));
});

Deno.test("Hub replaces the webhook installer's errors of untrusted clusters in the admission section only", async () => {
  const t = await running({ prod: registered("flag"), "r-closed": registered("secret") }, ["prod"]);
  try {
    t.hub.showAdmission(() => ({
      port: 8443,
      clusters: {
        prod: { configurations: 0, lastError: REFUSED, lastSyncAt: null },
        "r-closed": { configurations: 0, lastError: REFUSED, lastSyncAt: null },
        gone: { configurations: 2, lastError: null, lastSyncAt: null },
      },
    }));
    const a = t.hub.health().admission as { port: number; clusters: Record<string, { lastError: string | null }> };
    assert.equal(a.port, 8443);
    assert.equal(a.clusters.prod.lastError, REFUSED);
    assert.doesNotMatch(a.clusters["r-closed"].lastError ?? "", /refused|2379/);
    assert.match(a.clusters["r-closed"].lastError ?? "", /debug log/);
    assert.equal(a.clusters.gone.lastError, null);
  } finally {
    await t.finish();
  }
});

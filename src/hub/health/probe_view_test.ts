// Unit tests of the probe body: only names and states survive, with or without per-operator entries, in bounded bytes.
import assert from "node:assert/strict";
import type { ClusterHealth } from "./cluster_health.ts";
import type { HubHealth } from "../hub.ts";
import { notEngagedHealth } from "./hub_health.ts";
import { PROBE_MAX_CLUSTERS, PROBE_MAX_NAME, probeView } from "./probe_view.ts";

const secret = "https://10.0.0.7:6443 token=abc";

function health(extra: Record<string, unknown> = {}): HubHealth {
  return {
    status: "degraded",
    ready: false,
    notReady: ["down"],
    clusters: {
      up: {
        state: "watching",
        synced: true,
        objects: 12,
        queue: 3,
        lastEventAgeSeconds: 1,
        lastError: null,
        connectAttempts: 1,
        relists: 0,
        watchdogAborts: 0,
        missingPermissions: [],
        wedged: false,
        ...extra,
      },
      down: {
        state: "unreachable",
        synced: false,
        objects: 0,
        queue: 0,
        lastEventAgeSeconds: null,
        lastError: `cannot reach ${secret}`,
        connectAttempts: 7,
        relists: 0,
        watchdogAborts: 0,
        missingPermissions: ["watch uuid.demo.operator"],
        wedged: false,
      },
    },
    controller: { inFlight: 0, queued: 3, wedged: false },
  } as unknown as HubHealth;
}

Deno.test("probeView() keeps the status, readiness and each cluster's state, and nothing else", () => {
  const body = probeView(health({ provider: "secret", server: secret, owner: "replica-1" }));
  assert.deepEqual(body, {
    status: "degraded",
    ready: false,
    notReady: ["down"],
    clusters: { up: { state: "watching" }, down: { state: "unreachable" } },
    summary: { clusters: 2, listed: 2, omitted: 0, states: { watching: 1, unreachable: 1 }, notReady: 1 },
  });
  const text = JSON.stringify(body);
  for (const leak of [secret, "10.0.0.7", "watch uuid", "objects", "queue", "controller", "replica-1"]) {
    assert.ok(!text.includes(leak), `${leak} must not reach the probes`);
  }
});

Deno.test("probeView() names each operator's state when the health document has per-operator entries", () => {
  const body = probeView(health({
    operators: {
      uuid: { state: "watching", objects: 4, lastError: null, missingPermissions: [] },
      mirror: { state: "forbidden", objects: 0, lastError: secret, missingPermissions: ["list secrets"] },
    },
  }));
  assert.deepEqual(body.clusters.up, { state: "watching", operators: { uuid: "watching", mirror: "forbidden" } });
  assert.ok(!JSON.stringify(body).includes("list secrets"));
  assert.ok(!JSON.stringify(body).includes(secret));
});

Deno.test("probeView() answers an empty notReady list when every cluster is ready", () => {
  const h = health();
  delete h.notReady;
  assert.deepEqual(probeView(h).notReady, []);
});

/** `n` clusters named `prefix-00000`…, each with one operator, in `state`. */
function many(n: number, prefix: string, over: Partial<ClusterHealth> = {}): Record<string, ClusterHealth> {
  const out: Record<string, ClusterHealth> = {};
  for (let i = 0; i < n; i++) {
    out[`${prefix}-${String(i).padStart(5, "0")}`] = {
      ...notEngagedHealth(["uuid"], "cannot reach https://10.1.2.3:6443"),
      state: "unreachable",
      provider: "secret",
      gatesReadiness: false,
      ...over,
    };
  }
  return out;
}

function bytes(body: unknown): number {
  return new TextEncoder().encode(JSON.stringify(body)).byteLength;
}

Deno.test("probeView() answers about the same bytes for 10,000 clusters as for 100, naming at most PROBE_MAX_CLUSTERS and counting them all", () => {
  const sized = (n: number) => {
    const clusters = {
      prod: {
        ...many(1, "x")["x-00000"],
        state: "watching" as const,
        gatesReadiness: true,
      },
      ...many(n, "r"),
    };
    return probeView({ ...health(), ready: true, notReady: undefined, clusters } as HubHealth);
  };
  const small = sized(100);
  const large = sized(10_000);
  assert.equal(Object.keys(large.clusters).length, PROBE_MAX_CLUSTERS);
  assert.deepEqual(large.summary, {
    clusters: 10_001,
    listed: PROBE_MAX_CLUSTERS,
    omitted: 10_001 - PROBE_MAX_CLUSTERS,
    states: { watching: 1, unreachable: 10_000 },
    notReady: 0,
  });
  assert.ok(bytes(large) < 8 * 1024, `${bytes(large)} bytes`);
  assert.ok(bytes(large) - bytes(small) < 64, `${bytes(small)} → ${bytes(large)} bytes`);
  assert.equal(Object.keys(large.clusters)[0], "prod", "the command line's cluster is named first");
});

Deno.test("probeView() names the clusters holding readiness back first, then the command line's, then the others by name", () => {
  const clusters = {
    ...many(60, "z", { gatesReadiness: false }),
    ...many(3, "cmd", { state: "watching", gatesReadiness: true }),
    ...many(2, "wait", { gatesReadiness: true }),
  };
  const body = probeView({ ...health(), notReady: ["wait-00000", "wait-00001"], clusters } as HubHealth);
  const names = Object.keys(body.clusters);
  assert.deepEqual(names.slice(0, 5), ["wait-00000", "wait-00001", "cmd-00000", "cmd-00001", "cmd-00002"]);
  assert.equal(names[5], "z-00000");
  assert.equal(names.length, PROBE_MAX_CLUSTERS);
  assert.equal(body.summary.omitted, 65 - PROBE_MAX_CLUSTERS);
});

Deno.test("probeView() lists at most PROBE_MAX_CLUSTERS names in notReady and counts them all", () => {
  const clusters = many(500, "r", { gatesReadiness: true });
  const notReady = [...Object.keys(clusters), "secret provider"];
  const body = probeView({ ...health(), notReady, clusters } as HubHealth);
  assert.equal(body.notReady.length, PROBE_MAX_CLUSTERS);
  assert.equal(body.summary.notReady, 501);
  assert.deepEqual(body.notReady, notReady.slice(0, PROBE_MAX_CLUSTERS));
});

Deno.test("probeView() never writes a cluster name longer than PROBE_MAX_NAME, and counts it", () => {
  const long = "l".repeat(PROBE_MAX_NAME + 1);
  const clusters = { [long]: many(1, "x")["x-00000"], ok: { ...many(1, "x")["x-00000"] } };
  const body = probeView({ ...health(), notReady: [long], clusters } as HubHealth);
  assert.ok(!JSON.stringify(body).includes(long));
  assert.deepEqual(Object.keys(body.clusters), ["ok"]);
  assert.equal(body.summary.clusters, 2);
  assert.equal(body.summary.omitted, 1);
  assert.deepEqual(body.notReady, []);
  assert.equal(body.summary.notReady, 1);
});

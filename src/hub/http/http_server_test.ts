// Tests of the health endpoint over real HTTP on loopback, with an in-process Hub whose health the test sets.
import assert from "node:assert/strict";
import { silentLogger } from "../../util/mod.ts";
import type { ClusterHealth } from "../health/cluster_health.ts";
import { HealthServerError, serveHealth } from "./http_server.ts";
import { Hub, type HubHealth } from "../hub.ts";

function cluster(state: ClusterHealth["state"], lastError: string | null = null): ClusterHealth {
  return {
    state,
    synced: state === "watching",
    objects: 3,
    queue: 0,
    lastEventAgeSeconds: 1,
    lastError,
    connectAttempts: 1,
    relists: 0,
    watchdogAborts: 0,
    missingPermissions: state === "forbidden" ? ["list uuid.demo.operator"] : [],
    wedged: false,
    operators: { uuid: { state, synced: true, objects: 3, queue: 0, lastError, missingPermissions: [] } },
  };
}

/** Serves a Hub whose health() answers `health` (changeable) on a free loopback port; `stop()` ends the server. */
async function serve(health: HubHealth, options: { statusAndMetrics?: boolean } = {}) {
  const hub = new Hub({ logger: silentLogger() });
  const state = { health };
  hub.health = () => state.health;
  const stop = new AbortController();
  const port = Promise.withResolvers<number>();
  const done = serveHealth(hub, {
    hostname: "127.0.0.1",
    port: 0,
    logger: silentLogger(),
    onListen: (addr) => port.resolve(addr.port),
    ...options,
  }, stop.signal);
  const base = `http://127.0.0.1:${await port.promise}`;
  return {
    state,
    base,
    get: (path: string, init?: RequestInit) => fetch(base + path, init),
    async stop() {
      stop.abort();
      await done;
    },
  };
}

const HEALTHY: HubHealth = {
  status: "ok",
  ready: true,
  clusters: { prod: cluster("watching") },
  controller: { inFlight: 0, queued: 0, wedged: false },
};

Deno.test("/healthz stays 200 for an unreachable cluster and answers 503 only when the hub is failing (wedged)", async () => {
  const s = await serve({
    ...HEALTHY,
    status: "degraded",
    clusters: { prod: cluster("watching"), dev: cluster("unreachable", "dial tcp https://10.0.0.9:6443: refused") },
  });
  try {
    const degraded = await s.get("/healthz");
    assert.equal(degraded.status, 200);
    assert.equal(degraded.headers.get("cache-control"), "no-store");
    assert.deepEqual(await degraded.json(), {
      status: "degraded",
      ready: true,
      notReady: [],
      clusters: {
        prod: { state: "watching", operators: { uuid: "watching" } },
        dev: { state: "unreachable", operators: { uuid: "unreachable" } },
      },
      summary: { clusters: 2, listed: 2, omitted: 0, states: { watching: 1, unreachable: 1 }, notReady: 0 },
    });
    s.state.health = { ...HEALTHY, status: "failing", controller: { inFlight: 1, queued: 0, wedged: true } };
    const failing = await s.get("/healthz");
    assert.equal(failing.status, 503);
    assert.equal((await failing.json()).status, "failing");
  } finally {
    await s.stop();
  }
});

Deno.test("/readyz is 503 naming the clusters not ready, and 200 once every cluster is ready; never errors or URLs", async () => {
  const s = await serve({
    ...HEALTHY,
    ready: false,
    notReady: ["dev"],
    clusters: { dev: cluster("forbidden", "GET https://10.0.0.9:6443/apis: 403 Forbidden") },
  });
  try {
    const notReady = await s.get("/readyz");
    assert.equal(notReady.status, 503);
    const text = await notReady.text();
    assert.deepEqual(JSON.parse(text).notReady, ["dev"]);
    assert.doesNotMatch(text, /10\.0\.0\.9|Forbidden|list uuid/);
    s.state.health = HEALTHY;
    const ready = await s.get("/readyz");
    assert.equal(ready.status, 200);
    assert.equal((await ready.json()).ready, true);
  } finally {
    await s.stop();
  }
});

Deno.test("The health endpoint answers only GET and HEAD, and 405 with Allow to anything else", async () => {
  const s = await serve(HEALTHY);
  try {
    const head = await s.get("/healthz", { method: "HEAD" });
    assert.equal(head.status, 200);
    await head.body?.cancel();
    for (const method of ["POST", "PUT", "DELETE"]) {
      const res = await s.get("/healthz", { method });
      assert.equal(res.status, 405, method);
      assert.equal(res.headers.get("allow"), "GET, HEAD");
      await res.body?.cancel();
    }
  } finally {
    await s.stop();
  }
});

Deno.test("/status and /metrics are served by default, and 404 with the probes named when statusAndMetrics is false", async () => {
  const full = await serve(HEALTHY);
  try {
    const status = await full.get("/status");
    assert.equal(status.status, 200);
    assert.deepEqual(Object.keys((await status.json()).clusters), ["prod"]);
    const metrics = await full.get("/metrics");
    assert.equal(metrics.status, 200);
    assert.match(await metrics.text(), /^# HELP /m);
    const unknown = await full.get("/nope");
    assert.equal(unknown.status, 404);
    assert.equal(await unknown.text(), "not found: try /healthz, /readyz, /status or /metrics\n");
  } finally {
    await full.stop();
  }
  const probes = await serve(HEALTHY, { statusAndMetrics: false });
  try {
    for (const path of ["/status", "/metrics"]) {
      const res = await probes.get(path);
      assert.equal(res.status, 404, path);
      assert.equal(await res.text(), "not found: try /healthz or /readyz\n");
    }
    const ok = await probes.get("/healthz");
    assert.equal(ok.status, 200);
    await ok.body?.cancel();
  } finally {
    await probes.stop();
  }
});

Deno.test("/status pages its clusters with ?limit= and ?continue=, answers ?cluster=NAME, and 400 with one line for a bad parameter", async () => {
  const clusters: Record<string, ClusterHealth> = {};
  for (const name of ["a", "b", "c", "d", "e"]) clusters[name] = cluster("watching");
  const s = await serve({ ...HEALTHY, clusters });
  try {
    const first = await (await s.get("/status?limit=2")).json();
    assert.deepEqual(Object.keys(first.clusters), ["a", "b"]);
    assert.equal(first.summary.clusters, 5);
    const second = await (await s.get(`/status?limit=2&continue=${first.continue}`)).json();
    assert.deepEqual(Object.keys(second.clusters), ["c", "d"]);
    const one = await (await s.get("/status?cluster=e")).json();
    assert.deepEqual(Object.keys(one.clusters), ["e"]);
    for (const bad of ["/status?limit=0", "/status?limit=99999", "/status?continue=*"]) {
      const res = await s.get(bad);
      assert.equal(res.status, 400, bad);
      const text = await res.text();
      assert.match(text, /^invalid (limit|continue)[^\n]*\n$/, bad);
    }
  } finally {
    await s.stop();
  }
});

Deno.test("/healthz and /readyz answer a bounded number of bytes with 5,000 clusters, and /status the default page", async () => {
  const clusters: Record<string, ClusterHealth> = { prod: { ...cluster("watching"), gatesReadiness: true } };
  for (let i = 0; i < 5000; i++) {
    clusters[`secret-${i}`] = { ...cluster("unreachable", "refused"), provider: "secret", gatesReadiness: false };
  }
  const s = await serve({ ...HEALTHY, status: "degraded", clusters });
  try {
    for (const path of ["/healthz", "/readyz"]) {
      const res = await s.get(path);
      assert.equal(res.status, 200, path);
      const text = await res.text();
      assert.ok(text.length < 8192, `${path}: ${text.length} bytes`);
      const body = JSON.parse(text);
      assert.equal(body.summary.clusters, 5001);
      assert.equal(body.summary.states.unreachable, 5000);
      assert.equal(body.clusters.prod.state, "watching", "the command line's cluster is named");
    }
    const status = await (await s.get("/status")).json();
    assert.equal(Object.keys(status.clusters).length, 500);
    assert.equal(status.summary.providers.secret, 5000);
    assert.equal(typeof status.continue, "string");
  } finally {
    await s.stop();
  }
});

Deno.test("serveHealth throws a HealthServerError naming the address when the port is taken", () => {
  const taken = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  try {
    const port = (taken.addr as Deno.NetAddr).port;
    const hub = new Hub({ logger: silentLogger() });
    assert.throws(
      () => serveHealth(hub, { hostname: "127.0.0.1", port, logger: silentLogger() }, new AbortController().signal),
      (err: Error) =>
        err instanceof HealthServerError && err.message.startsWith(`cannot serve health on 127.0.0.1:${port}: `),
    );
  } finally {
    taken.close();
  }
});

Deno.test("serveHealth settles once its signal aborts", async () => {
  const s = await serve(HEALTHY);
  await s.stop();
  await assert.rejects(s.get("/healthz"));
});

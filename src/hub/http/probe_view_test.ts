// Unit tests of the probe body: only names and states survive, with or without per-operator entries.
import assert from "node:assert/strict";
import type { HubHealth } from "../hub.ts";
import { probeView } from "./probe_view.ts";

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

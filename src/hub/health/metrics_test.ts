// Unit tests of the hub's Prometheus registry: controller-runtime and workqueue names, per-cluster series, health read
// at scrape time, and a disengaged cluster's series dropped.

import assert from "node:assert/strict";
import type { ClusterHealth } from "./cluster_health.ts";
import { HubMetrics } from "./metrics.ts";

function health(state: ClusterHealth["state"], over: Partial<ClusterHealth> = {}): ClusterHealth {
  return {
    state,
    synced: true,
    objects: 7,
    queue: 0,
    lastEventAgeSeconds: 1.5,
    lastError: null,
    connectAttempts: 3,
    relists: 0,
    watchdogAborts: 0,
    missingPermissions: [],
    wedged: false,
    operators: { uuid: { state, synced: true, objects: 7, queue: 0, lastError: null, missingPermissions: [] } },
    ...over,
  } as ClusterHealth;
}

Deno.test("HubMetrics shows each cluster's and operator's state as one 1 among 0s, read from health at each scrape", async () => {
  let clusters: Record<string, ClusterHealth> = { prod: health("watching"), edge: health("unreachable") };
  const m = new HubMetrics(() => clusters);
  const text = await m.registry.metrics();
  assert.match(text, /^hub_cluster_state\{cluster="prod",state="watching"\} 1$/m);
  assert.match(text, /^hub_cluster_state\{cluster="prod",state="unreachable"\} 0$/m);
  assert.match(text, /^hub_cluster_state\{cluster="edge",state="unreachable"\} 1$/m);
  assert.match(text, /^hub_operator_state\{cluster="edge",controller="uuid",state="unreachable"\} 1$/m);
  assert.match(text, /^hub_cluster_objects\{cluster="prod"\} 7$/m);
  assert.match(text, /^hub_cluster_last_event_age_seconds\{cluster="prod"\} 1.5$/m);
  assert.match(text, /^hub_watch_connect_attempts_total\{cluster="prod"\} 3$/m);
  clusters = { prod: health("forbidden", { lastEventAgeSeconds: null }) };
  const later = await m.registry.metrics();
  assert.match(later, /^hub_cluster_state\{cluster="prod",state="forbidden"\} 1$/m);
  assert.match(later, /^hub_cluster_state\{cluster="prod",state="watching"\} 0$/m);
  assert.doesNotMatch(later, /cluster="edge"/, "a cluster gone from health is gone from the scrape");
  assert.doesNotMatch(later, /^hub_cluster_last_event_age_seconds\{/m, "no age before the first event");
});

Deno.test("HubMetrics uses controller-runtime's and workqueue's names and labels, per cluster", async () => {
  const m = new HubMetrics(() => ({}));
  m.reconcileTotal.inc("uuid", "prod", "success");
  m.reconcileErrors.inc("uuid", "prod");
  m.reconcileTime.observe(0.002, "uuid", "prod");
  m.depth.set(4, "uuid", "prod");
  m.adds.inc("uuid", "prod");
  m.retries.inc("uuid", "prod");
  m.queueDuration.observe(0.5, "uuid", "prod");
  m.requests.inc("prod", "200", "GET");
  m.leader.set({ name: "operator-hub" }, 1);
  const text = await m.registry.metrics();
  for (
    const line of [
      'controller_runtime_reconcile_total{controller="uuid",cluster="prod",result="success"} 1',
      'controller_runtime_reconcile_errors_total{controller="uuid",cluster="prod"} 1',
      'controller_runtime_reconcile_time_seconds_count{controller="uuid",cluster="prod"} 1',
      'workqueue_depth{name="uuid",cluster="prod"} 4',
      'workqueue_adds_total{name="uuid",cluster="prod"} 1',
      'workqueue_retries_total{name="uuid",cluster="prod"} 1',
      'workqueue_queue_duration_seconds_count{name="uuid",cluster="prod"} 1',
      'rest_client_requests_total{cluster="prod",code="200",method="GET"} 1',
      'leader_election_master_status{name="operator-hub"} 1',
    ]
  ) assert.ok(text.split("\n").includes(line), `missing: ${line}`);
});

Deno.test("HubMetrics.forgetCluster drops every series of that cluster and keeps the others'", async () => {
  const m = new HubMetrics(() => ({}));
  for (const c of ["prod", "edge"]) {
    m.reconcileTotal.inc("uuid", c, "success");
    m.reconcileErrors.inc("uuid", c);
    m.reconcileTime.observe(0.1, "uuid", c);
    m.depth.set(1, "uuid", c);
    m.adds.inc("uuid", c);
    m.retries.inc("uuid", c);
    m.queueDuration.observe(0.1, "uuid", c);
    m.requests.inc(c, "200", "GET");
  }
  m.forgetCluster("edge");
  const text = await m.registry.metrics();
  assert.doesNotMatch(text, /cluster="edge"/);
  for (const family of ["controller_runtime_reconcile_total", "workqueue_depth", "rest_client_requests_total"]) {
    assert.match(text, new RegExp(`^${family}\\{[^}]*cluster="prod"`, "m"), `${family}: prod's series stay`);
  }
});

Deno.test("Two HubMetrics never share a counter (one registry each)", async () => {
  const a = new HubMetrics(() => ({}));
  const b = new HubMetrics(() => ({}));
  a.reconcileTotal.inc("uuid", "prod", "success");
  assert.match(await a.registry.metrics(), /controller_runtime_reconcile_total\{[^}]*\} 1/);
  assert.doesNotMatch(await b.registry.metrics(), /controller_runtime_reconcile_total\{/);
});

Deno.test("HubMetrics gives series of their own only to the command line's clusters and to clusters reached, and counts the rest by provider and state", async () => {
  const clusters: Record<string, ClusterHealth> = {
    prod: health("unreachable", { lastEventAgeSeconds: null }),
    reached: health("watching", { provider: "secret", gatesReadiness: false }),
  };
  for (let i = 0; i < 1000; i++) {
    clusters[`hostile-${i}`] = health(i % 2 ? "unreachable" : "unauthorized", {
      provider: "secret",
      gatesReadiness: false,
      lastEventAgeSeconds: null,
    });
  }
  const m = new HubMetrics(() => clusters);
  m.requests.inc("prod", "200", "GET");
  m.requests.inc("reached", "200", "GET");
  for (let i = 0; i < 1000; i += 2) m.requests.inc(`hostile-${i}`, "401", "GET");
  const text = await m.registry.metrics();
  const series = text.split("\n").filter((l) => l && !l.startsWith("#"));
  assert.ok(!text.includes("hostile-"), "no series names a cluster that was never reached");
  assert.ok(series.length < 150, `a fixed set of series, whatever the number of strangers: ${series.length}`);
  assert.match(text, /^hub_cluster_state\{cluster="prod",state="unreachable"\} 1$/m, "the command line's, unreached");
  assert.match(text, /^hub_cluster_state\{cluster="reached",state="watching"\} 1$/m);
  assert.match(text, /^hub_clusters_by_state\{provider="secret",state="unreachable"\} 500$/m);
  assert.match(text, /^hub_clusters_by_state\{provider="secret",state="unauthorized"\} 500$/m);
  assert.match(text, /^hub_clusters_by_state\{provider="secret",state="watching"\} 1$/m);
  assert.match(text, /^hub_clusters_by_state\{provider="flag",state="unreachable"\} 1$/m);
  assert.match(text, /^rest_client_requests_total\{cluster="",code="401",method="GET"\} 500$/m, "folded, summed");
  assert.match(text, /^rest_client_requests_total\{cluster="reached",code="200",method="GET"\} 1$/m);
  // A cluster that was reached keeps its series when it later fails, until it is disengaged.
  clusters.reached = health("unreachable", { provider: "secret", gatesReadiness: false, lastEventAgeSeconds: null });
  assert.match(await m.registry.metrics(), /^hub_cluster_state\{cluster="reached",state="unreachable"\} 1$/m);
  m.forgetCluster("reached");
  assert.doesNotMatch(await m.registry.metrics(), /cluster="reached"/);
  // A provider whose clusters are all gone keeps its counts, at 0.
  for (const name of Object.keys(clusters)) if (name !== "prod") delete clusters[name];
  assert.match(await m.registry.metrics(), /^hub_clusters_by_state\{provider="secret",state="unreachable"\} 0$/m);
});

Deno.test("HubMetrics reads the clusters' health once per scrape", async () => {
  let reads = 0;
  const m = new HubMetrics(() => {
    reads++;
    return { prod: health("watching") };
  });
  m.requests.inc("prod", "200", "GET");
  await m.registry.metrics();
  assert.equal(reads, 1);
});

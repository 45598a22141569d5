// The Grafana dashboard (deploy/grafana/operator-hub.json): valid PromQL that covers what a platform team watches,
// and only metric names a real hub, serving the local clusters, exports on /metrics.
// deno-lint-ignore-file no-explicit-any -- the dashboard is Grafana's free-form JSON.

import assert from "node:assert/strict";
import { localApi, UUID_V4, waitFor } from "../../dev/support/cluster_api.ts";
import { HubProcess } from "../../dev/support/hub_process.ts";
import { requireClusters, testNamespace } from "../support/mod.ts";
import { dashboardQueries, exposedNames, isExported, PromqlSyntaxError, queryNames } from "./_dashboard.ts";
import { ROOT } from "./_support.ts";

const DASHBOARD = `${ROOT}deploy/grafana/operator-hub.json`;
/** Labels Prometheus adds to every scraped series (target labels), not the hub. */
const TARGET_LABELS = ["job", "instance", "namespace", "pod", "service", "container", "endpoint"];

function dashboard(): any {
  return JSON.parse(Deno.readTextFileSync(DASHBOARD));
}

Deno.test("The dashboard's queries are valid PromQL and cover reconciles, errors, queue depth and latency per cluster, cluster states and watch reconnects", () => {
  const d = dashboard();
  assert.equal(d.uid, "operator-hub");
  const queries = dashboardQueries(d);
  assert.ok(queries.length >= 15, `${queries.length} queries`);
  const parsed = queries.map((q) => ({ ...q, ...queryNames(q.expr) }));
  const perCluster = (metric: string) =>
    parsed.some((q) => q.metrics.includes(metric) && /by \([^)]*\bcluster\b/.test(q.expr));
  for (
    const metric of [
      "controller_runtime_reconcile_total",
      "controller_runtime_reconcile_errors_total",
      "controller_runtime_reconcile_time_seconds_bucket",
      "workqueue_depth",
      "workqueue_queue_duration_seconds_bucket",
      "hub_cluster_state",
      "hub_watch_connect_attempts_total",
    ]
  ) assert.ok(perCluster(metric), `a query of ${metric} per cluster`);
  // Every panel query uses the data source variable and the cluster filter, so one dashboard serves any hub.
  const walk = (panels: any[]): any[] => panels.flatMap((p) => [p, ...walk(p.panels ?? [])]);
  for (const p of walk(d.panels).filter((p) => p.targets)) {
    assert.equal(p.datasource?.uid, "${datasource}", `panel ${p.title} uses the datasource variable`);
    for (const t of p.targets) {
      if (!t.expr.includes("leader_election_master_status")) {
        assert.match(t.expr, /cluster=~"\$cluster"/, `${p.title} ${t.refId} filters by $cluster`);
      }
    }
  }
  // Panel ids are unique (Grafana links and edits panels by id).
  const ids = walk(d.panels).map((p) => p.id);
  assert.equal(new Set(ids).size, ids.length);
});

Deno.test("queryNames() reads metric and label names, and rejects a query that is not PromQL", () => {
  assert.deepEqual(
    queryNames(
      'histogram_quantile(0.9, sum by (cluster, le) (rate(a_bucket{cluster=~"$cluster"}[$__rate_interval]))) / b',
    ),
    { metrics: ["a_bucket", "b"], labels: ["cluster", "le"] },
  );
  assert.throws(() => queryNames("sum by (cluster (rate(x[5m]))"), PromqlSyntaxError);
});

Deno.test("Every metric name the dashboard queries is one a real hub serving the local clusters exports on /metrics", async () => {
  const { names } = requireClusters();
  await using ns = await testNamespace("grafana", { contexts: names });
  const hub = HubProcess.start({ clusters: names, args: ["--namespace", ns.name] });
  try {
    await hub.waitReady();
    // Some work, so the per-object families have samples too, not only their # TYPE lines.
    const api = localApi(names[0]);
    await api.createUuids(ns.name, ["g-0", "g-1", "g-2"]);
    await waitFor(async () => {
      const m = await api.uuidsOf(ns.name);
      return [...m.values()].filter((u) => typeof u === "string" && UUID_V4.test(u)).length === 3;
    }, `3 Uuids assigned in ${names[0]}`);
    const scrape = await hub.get("/metrics");
    assert.equal(scrape.status, 200);
    const { families, samples, labels } = exposedNames(scrape.text);
    assert.ok(families.size >= 10, `${families.size} families exported`);

    const used = new Map<string, string[]>();
    const usedLabels = new Set<string>();
    for (const q of dashboardQueries(dashboard())) {
      const n = queryNames(q.expr);
      for (const m of n.metrics) used.set(m, [...(used.get(m) ?? []), q.where]);
      for (const l of n.labels) usedLabels.add(l);
    }
    const missing = [...used].filter(([m]) => !isExported(m, families)).map(([m, where]) => `${m} (${where[0]})`);
    assert.deepEqual(missing, [], `metric names the hub does not export:\n${missing.join("\n")}`);
    const unknownLabels = [...usedLabels].filter((l) => !labels.has(l) && !TARGET_LABELS.includes(l));
    assert.deepEqual(unknownLabels, [], "label names the hub's series do not carry");
    // The per-cluster families the main panels read have samples for the clusters the hub serves.
    for (
      const family of ["hub_cluster_state", "hub_watch_connect_attempts_total", "controller_runtime_reconcile_total"]
    ) {
      assert.ok(samples.has(family), `${family} has samples`);
    }
    assert.match(scrape.text, new RegExp(`^hub_cluster_state\\{cluster="${names[0]}",state="watching"\\} 1$`, "m"));
    console.log(`dashboard metric names (${used.size}), all exported: ${[...used.keys()].sort().join(", ")}`);
  } finally {
    await hub.stop();
  }
});

Deno.test("The exported-name check rejects a name the hub does not export and accepts only real histogram suffixes", () => {
  const { families } = exposedNames([
    "# TYPE a_total counter",
    "a_total 1",
    "# TYPE h_seconds histogram",
    'h_seconds_bucket{le="+Inf"} 1',
  ].join("\n"));
  assert.ok(isExported("a_total", families));
  assert.ok(isExported("h_seconds_bucket", families) && isExported("h_seconds_count", families));
  assert.ok(!isExported("h_seconds", families), "a histogram is queried through its series");
  assert.ok(!isExported("a_total_bucket", families), "a counter has no buckets");
  assert.ok(!isExported("b_total", families));
});

// Unit tests for reading a hub's /metrics text: labelled histograms kept, sums by labels, missing series caught.
import assert from "node:assert/strict";
import { metricSeries, metricSum, parseMetrics } from "./prometheus_text.ts";

const TEXT = `# HELP reconcile_total Reconciles.
# TYPE reconcile_total counter
reconcile_total{cluster="a",result="success"} 3
reconcile_total{cluster="a",result="error"} 1
reconcile_total{cluster="b",result="success"} 5
# HELP reconcile_seconds Reconcile time.
# TYPE reconcile_seconds histogram
reconcile_seconds_bucket{cluster="a",le="+Inf"} 4
reconcile_seconds_sum{cluster="a"} 0.5
reconcile_seconds_count{cluster="a"} 4
`;

Deno.test("parseMetrics keeps every label, histograms' included", () => {
  const m = parseMetrics(TEXT);
  assert.equal(m.get("reconcile_total")?.length, 3);
  assert.deepEqual(m.get("reconcile_seconds_count"), [{ labels: { cluster: "a" }, value: 4 }]);
  assert.deepEqual(m.get("reconcile_seconds_bucket")?.[0].labels, { cluster: "a", le: "+Inf" });
});

Deno.test("metricSum adds the samples whose labels include the given ones, and is 0 for a series that is not there", () => {
  const m = parseMetrics(TEXT);
  assert.equal(metricSum(m, "reconcile_total"), 9);
  assert.equal(metricSum(m, "reconcile_total", { result: "success" }), 8);
  assert.equal(metricSum(m, "reconcile_total", { cluster: "a", result: "error" }), 1);
  assert.equal(metricSum(m, "reconcile_total", { cluster: "c" }), 0);
});

Deno.test("metricSeries sums like metricSum but fails when no series carries the labels", () => {
  const m = parseMetrics(TEXT);
  assert.equal(metricSeries(m, "reconcile_total", { cluster: "b" }), 5);
  assert.throws(() => metricSeries(m, "reconcile_total", { cluster: "c" }), /no reconcile_total series/);
  assert.throws(() => metricSeries(m, "absent_total"), /no absent_total series/);
});

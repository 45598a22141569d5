// Unit tests for the hot-path series: values, cumulative buckets and removal, read back through
// the hub's metric registry (src/util/prometheus.ts).
import assert from "node:assert/strict";
import * as prom from "../../util/prometheus.ts";
import { CounterSeries, GaugeSeries, HistogramSeries } from "./metric_series.ts";

Deno.test("CounterSeries and GaugeSeries render one line per label tuple through the registry", async () => {
  const r = new prom.MetricRegistry();
  const c = new CounterSeries(r, "demo_total", "help text", ["cluster", "code"]);
  const g = new GaugeSeries(r, "demo_depth", "depth", ["cluster"]);
  c.inc("prod", "200");
  c.inc("prod", "200");
  c.inc("staging", "409");
  g.set(7, "prod");
  g.set(3, "prod");
  const text = await r.metrics();
  assert.match(text, /# TYPE demo_total counter/);
  assert.match(text, /^demo_total\{cluster="prod",code="200"\} 2$/m);
  assert.match(text, /^demo_total\{cluster="staging",code="409"\} 1$/m);
  assert.match(text, /^demo_depth\{cluster="prod"\} 3$/m);
  assert.equal(c.value("prod", "200"), 2);
  assert.throws(() => c.inc("prod"), /takes 2 label values, got 1/);
});

Deno.test("HistogramSeries keeps cumulative buckets, +Inf, sum and count", async () => {
  const r = new prom.MetricRegistry();
  const h = new HistogramSeries(r, "demo_seconds", "latency", ["cluster"], [0.1, 1, 10]);
  for (const v of [0.05, 0.1, 0.5, 2, 50]) h.observe(v, "prod");
  const text = await r.metrics();
  const line = (le: string) => new RegExp(`^demo_seconds_bucket\\{cluster="prod",le="${le}"\\} (\\S+)$`, "m");
  assert.equal(text.match(line("0.1"))?.[1], "2", text);
  assert.equal(text.match(line("1"))?.[1], "3");
  assert.equal(text.match(line("10"))?.[1], "4");
  assert.equal(text.match(line("\\+Inf"))?.[1], "5");
  assert.match(text, /^demo_seconds_sum\{cluster="prod"\} 52.65$/m);
  assert.match(text, /^demo_seconds_count\{cluster="prod"\} 5$/m);
  assert.throws(() => new HistogramSeries(r, "bad_seconds", "x", [], [1, 1]), /buckets must increase/);
});

Deno.test("removeWhere() drops only the series carrying that label value", async () => {
  const r = new prom.MetricRegistry();
  const c = new CounterSeries(r, "demo_total", "x", ["name", "cluster"]);
  const h = new HistogramSeries(r, "demo_seconds", "x", ["cluster"], [1]);
  c.inc("uuid", "prod");
  c.inc("uuid", "staging");
  h.observe(0.5, "staging");
  c.removeWhere("cluster", "staging");
  h.removeWhere("cluster", "staging");
  const text = await r.metrics();
  assert.match(text, /cluster="prod"/);
  assert.doesNotMatch(text, /staging/);
  assert.equal(c.value("uuid", "staging"), 0);
});

Deno.test("foldClusters() renders the series of clusters without their own as one per other labels, summed, and keeps the rest", async () => {
  const r = new prom.MetricRegistry();
  const c = new CounterSeries(r, "c_total", "c", ["cluster", "code"]);
  const h = new HistogramSeries(r, "h_seconds", "h", ["cluster"], [1, 10]);
  for (const cluster of ["a", "x", "y"]) {
    c.inc(cluster, "401");
    h.observe(5, cluster);
  }
  c.inc("a", "200");
  const own = (cluster: string) => cluster === "a";
  c.foldClusters(() => own);
  h.foldClusters(() => own);
  const text = await r.metrics();
  assert.match(text, /^c_total\{cluster="a",code="401"\} 1$/m);
  assert.match(text, /^c_total\{cluster="a",code="200"\} 1$/m);
  assert.match(text, /^c_total\{cluster="",code="401"\} 2$/m);
  assert.match(text, /^h_seconds_bucket\{cluster="",le="10"\} 2$/m);
  assert.match(text, /^h_seconds_count\{cluster=""\} 2$/m);
  assert.match(text, /^h_seconds_sum\{cluster=""\} 10$/m);
  assert.doesNotMatch(text, /cluster="[xy]"/);
  assert.equal(c.value("x", "401"), 1, "what is kept per cluster is unchanged");
});

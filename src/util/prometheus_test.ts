// Unit tests for the metric registry: the text format (read back by an independent parser too), labels, collect.
import assert from "node:assert/strict";
import parsePrometheusTextFormat from "parse-prometheus-text-format";
import { Counter, Gauge, Histogram, MetricRegistry, PROMETHEUS_CONTENT_TYPE } from "./prometheus.ts";

Deno.test("a registry renders counters, gauges and histograms in the text format, in registration order", async () => {
  const r = new MetricRegistry();
  const c = new Counter({ name: "demo_total", help: "Requests", labelNames: ["code", "method"], registers: [r] });
  const g = new Gauge({ name: "demo_depth", help: "Depth", registers: [r] });
  const h = new Histogram({
    name: "demo_seconds",
    help: "Latency",
    labelNames: ["op"],
    buckets: [0.1, 1],
    registers: [r],
  });
  c.inc({ code: "200", method: "GET" });
  c.inc({ code: "200", method: "GET" }, 2);
  c.inc({ method: "PUT", code: 409 });
  g.set(7);
  g.dec(2);
  for (const v of [0.05, 0.5, 5]) h.observe({ op: "read" }, v);
  assert.equal(r.contentType, PROMETHEUS_CONTENT_TYPE);
  assert.equal(
    await r.metrics(),
    [
      "# HELP demo_total Requests",
      "# TYPE demo_total counter",
      'demo_total{code="200",method="GET"} 3',
      'demo_total{code="409",method="PUT"} 1',
      "",
      "# HELP demo_depth Depth",
      "# TYPE demo_depth gauge",
      "demo_depth 5",
      "",
      "# HELP demo_seconds Latency",
      "# TYPE demo_seconds histogram",
      'demo_seconds_bucket{op="read",le="0.1"} 1',
      'demo_seconds_bucket{op="read",le="1"} 2',
      'demo_seconds_bucket{op="read",le="+Inf"} 3',
      'demo_seconds_sum{op="read"} 5.55',
      'demo_seconds_count{op="read"} 3',
      "",
    ].join("\n"),
  );
});

Deno.test("the text reads back through an independent parser, escapes included", async () => {
  const r = new MetricRegistry();
  const c = new Counter({ name: "odd_total", help: 'a "help"\\ with\nnewline', labelNames: ["v"], registers: [r] });
  c.inc({ v: 'say "hi"\\\nthere' });
  new Gauge({ name: "inf_gauge", help: "x", registers: [r] }).set(Infinity);
  const parsed = parsePrometheusTextFormat(await r.metrics()) as {
    name: string;
    help: string;
    metrics: { value: string; labels?: Record<string, string> }[];
  }[];
  const odd = parsed.find((m) => m.name === "odd_total")!;
  assert.equal(odd.metrics[0].labels?.v, 'say "hi"\\\nthere');
  assert.equal(odd.metrics[0].value, "1");
  assert.equal(parsed.find((m) => m.name === "inf_gauge")?.metrics[0].value, "+Inf");
});

Deno.test("a metric without labels starts at 0; reset and remove drop series; collect runs before each rendering", async () => {
  const r = new MetricRegistry();
  const plain = new Counter({ name: "plain_total", help: "x", registers: [r] });
  assert.match(await r.metrics(), /^plain_total 0$/m);
  plain.inc(4);
  plain.reset();
  assert.match(await r.metrics(), /^plain_total 0$/m);
  let reads = 0;
  const g = new Gauge<"cluster">({
    name: "seen",
    help: "x",
    labelNames: ["cluster"],
    registers: [r],
    collect() {
      reads++;
      this.reset();
      this.set({ cluster: "prod" }, reads);
    },
  });
  assert.match(await r.metrics(), /^seen\{cluster="prod"\} 1$/m);
  assert.match(await r.metrics(), /^seen\{cluster="prod"\} 2$/m);
  const c = new Counter<"cluster">({ name: "by_cluster_total", help: "x", labelNames: ["cluster"], registers: [r] });
  c.inc({ cluster: "a" });
  c.inc({ cluster: "b" });
  c.remove({ cluster: "a" });
  const text = await r.metrics();
  assert.doesNotMatch(text, /by_cluster_total\{cluster="a"\}/);
  assert.match(text, /^by_cluster_total\{cluster="b"\} 1$/m);
  assert.equal((await g.get()).values.length, 1);
  assert.equal(r.getSingleMetric("seen"), g);
});

Deno.test("bad input is refused with an error naming it", () => {
  const r = new MetricRegistry();
  const c = new Counter<"code">({ name: "refused_total", help: "x", labelNames: ["code"], registers: [r] });
  assert.throws(() => c.inc({ cluster: "x" } as never), /Added label "cluster" is not included in initial labelset/);
  assert.throws(() => c.inc({ code: "1" }, -1), /not possible to decrease a counter/);
  assert.throws(() => c.inc({ code: "1" }, NaN), /not a valid number/);
  assert.throws(() => new Counter({ name: "refused_total", help: "y", registers: [r] }), /already been registered/);
  assert.throws(() => new Gauge({ name: "bad-name", help: "x" }), /Invalid metric name: bad-name/);
  assert.throws(() => new Histogram({ name: "h", help: "x", buckets: [1, 1] }), /buckets must increase/);
});

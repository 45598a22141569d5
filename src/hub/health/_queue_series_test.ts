// Unit tests of the shared queue's per cluster × operator accounting, read back through the hub's registry.
import assert from "node:assert/strict";
import { HubMetrics } from "./metrics.ts";
import { QueueSeries } from "./_queue_series.ts";
import type { QueueKey } from "../../queue/mod.ts";

/** A queue key written as `cluster/operator/namespace/name` (test fixtures only). */
function k(s: string): QueueKey {
  const [name, namespace, operator, ...cluster] = s.split("/").reverse();
  return { operator, request: { cluster: cluster.reverse().join("/"), namespace, name } };
}

function setup() {
  const metrics = new HubMetrics(() => ({}));
  return { metrics, series: new QueueSeries(metrics) };
}

/** The value of `workqueue_depth{name, cluster}` as /metrics renders it, or undefined when it has no line. */
async function depthLine(metrics: HubMetrics, name: string, cluster: string): Promise<number | undefined> {
  const text = await metrics.registry.metrics();
  const m = text.match(new RegExp(`^workqueue_depth\\{name="${name}",cluster="${cluster}"\\} (\\S+)$`, "m"));
  return m ? Number(m[1]) : undefined;
}

Deno.test("QueueSeries counts each key under its own cluster and operator, whatever the rest of the key", async () => {
  const { metrics, series } = setup();
  series.hooks.added(k("prod/uuid/ns/a"));
  series.hooks.added(k("prod/uuid/ns/b"));
  series.hooks.added(k("prod/mirror/ns/a"));
  series.hooks.added(k("dev/uuid//a"));
  series.hooks.added(k("capi#fleet/edge/uuid/ns/a"));
  assert.equal(series.depth("prod", "uuid"), 2);
  assert.equal(series.depth("prod", "mirror"), 1);
  assert.equal(series.depth("dev", "uuid"), 1);
  assert.equal(series.depth("capi#fleet/edge", "uuid"), 1, "a cluster name may hold a slash");
  assert.equal(series.depth("staging", "uuid"), 0, "a pair never seen is empty");
  assert.equal(metrics.adds.value("uuid", "prod"), 2);
  assert.equal(await depthLine(metrics, "uuid", "prod"), 2);
});

Deno.test("QueueSeries lowers the depth as keys are handed out, never below zero, and records the wait in seconds", async () => {
  const { metrics, series } = setup();
  series.hooks.added(k("prod/uuid/ns/a"));
  series.hooks.handedOut(k("prod/uuid/ns/a"), 1500);
  series.hooks.handedOut(k("prod/uuid/ns/a"), 10);
  assert.equal(series.depth("prod", "uuid"), 0);
  assert.equal(await depthLine(metrics, "uuid", "prod"), 0);
  const text = await metrics.registry.metrics();
  assert.match(text, /^workqueue_queue_duration_seconds_sum\{name="uuid",cluster="prod"\} 1\.51$/m);
  assert.match(text, /^workqueue_queue_duration_seconds_count\{name="uuid",cluster="prod"\} 2$/m);
});

Deno.test("QueueSeries counts retries per cluster and operator", () => {
  const { metrics, series } = setup();
  series.hooks.retried(k("prod/uuid/ns/a"));
  series.hooks.retried(k("prod/uuid/ns/a"));
  series.hooks.retried(k("dev/uuid/ns/a"));
  assert.equal(metrics.retries.value("uuid", "prod"), 2);
  assert.equal(metrics.retries.value("uuid", "dev"), 1);
});

Deno.test("QueueSeries.zero() empties one cluster's depths and leaves the others", async () => {
  const { metrics, series } = setup();
  for (const key of ["prod/uuid/ns/a", "prod/mirror/ns/a", "dev/uuid/ns/a"]) series.hooks.added(k(key));
  series.zero("prod");
  assert.equal(series.depth("prod", "uuid"), 0);
  assert.equal(series.depth("prod", "mirror"), 0);
  assert.equal(await depthLine(metrics, "mirror", "prod"), 0);
  assert.equal(series.depth("dev", "uuid"), 1);
  assert.equal(await depthLine(metrics, "uuid", "dev"), 1);
});

Deno.test("QueueSeries.forget() drops a cluster's entries, so a name that comes back starts from zero", () => {
  const { series } = setup();
  series.hooks.added(k("prod/uuid/ns/a"));
  series.hooks.added(k("dev/uuid/ns/a"));
  series.forget("prod");
  assert.equal(series.depth("prod", "uuid"), 0);
  assert.equal(series.depth("dev", "uuid"), 1);
  series.hooks.added(k("prod/uuid/ns/b"));
  assert.equal(series.depth("prod", "uuid"), 1);
});

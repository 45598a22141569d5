// Unit tests for the admission series: controller-runtime's names, a cluster label from a bounded set.
import assert from "node:assert/strict";
import * as prom from "../../util/prometheus.ts";
import { WebhookMetrics } from "./webhook_metrics.ts";

/** The number of sample lines in the registry's exposition. */
async function series(registry: prom.MetricRegistry): Promise<number> {
  return (await registry.metrics()).split("\n").filter((l) => l && !l.startsWith("#")).length;
}

Deno.test("WebhookMetrics counts and times each answer by webhook, code and cluster", async () => {
  const registry = new prom.MetricRegistry();
  const m = new WebhookMetrics(registry);
  m.observe("website/validating/image", "dev", 200, 0.003);
  m.observe("website/validating/image", "dev", 500, 0.2);
  const text = await registry.metrics();
  assert.match(
    text,
    /controller_runtime_webhook_requests_total\{webhook="website\/validating\/image",code="200",cluster="dev"\} 1/,
  );
  assert.match(
    text,
    /controller_runtime_webhook_requests_total\{webhook="website\/validating\/image",code="500",cluster="dev"\} 1/,
  );
  assert.match(
    text,
    /controller_runtime_webhook_latency_seconds_count\{webhook="website\/validating\/image",cluster="dev"\} 2/,
  );
});

Deno.test("WebhookMetrics counts 404 and 405 in series that exist from the start, and forgets a cluster's series", async () => {
  const registry = new prom.MetricRegistry();
  const m = new WebhookMetrics(registry);
  const atStart = await series(registry);
  assert.match(
    await registry.metrics(),
    /controller_runtime_webhook_requests_total\{webhook="unknown",code="404",cluster="unknown"\} 0/,
  );
  for (let i = 0; i < 100; i++) m.unrouted(i % 2 ? 404 : 405);
  assert.equal(await series(registry), atStart, "no series added");
  assert.match(
    await registry.metrics(),
    /controller_runtime_webhook_requests_total\{webhook="unknown",code="405",cluster="unknown"\} 50/,
  );
  m.observe("w/validating/a", "prod", 200, 0.001);
  m.observe("w/mutating/b", "prod", 400, 0.001);
  m.observe("w/validating/a", "dev", 200, 0.001);
  const withDev = await series(registry);
  m.forgetCluster("prod");
  m.forgetCluster("never");
  const text = await registry.metrics();
  assert.doesNotMatch(text, /cluster="prod"/);
  assert.match(text, /code="200",cluster="dev"\} 1/);
  m.forgetCluster("dev");
  assert.equal(await series(registry), atStart, `back to the start (was ${withDev})`);
});

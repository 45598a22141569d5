// Unit tests for the admission series: controller-runtime's names with a cluster label.
import assert from "node:assert/strict";
import client from "prom-client";
import { WebhookMetrics } from "./webhook_metrics.ts";

Deno.test("WebhookMetrics counts and times each answer by webhook, code and cluster", async () => {
  const registry = new client.Registry();
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

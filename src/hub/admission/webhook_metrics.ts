// The admission port's Prometheus series, with controller-runtime's names and a cluster label.

import client from "prom-client";

/** Counts and times every admission request the hub answers. */
export class WebhookMetrics {
  /** Labels: webhook (`operator/type/id`), code (the HTTP status answered), cluster. */
  readonly requests: client.Counter<"webhook" | "code" | "cluster">;
  /** Labels: webhook, cluster. */
  readonly latency: client.Histogram<"webhook" | "cluster">;
  /** Labels: webhook. */
  readonly inFlight: client.Gauge<"webhook">;

  constructor(registry: client.Registry) {
    const registers = [registry];
    this.requests = new client.Counter({
      name: "controller_runtime_webhook_requests_total",
      help: "Total number of admission requests by HTTP status code, per webhook and calling cluster",
      labelNames: ["webhook", "code", "cluster"],
      registers,
    });
    this.latency = new client.Histogram({
      name: "controller_runtime_webhook_latency_seconds",
      help: "Histogram of the latency of processing admission requests, per webhook and calling cluster",
      labelNames: ["webhook", "cluster"],
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    });
    this.inFlight = new client.Gauge({
      name: "controller_runtime_webhook_requests_in_flight",
      help: "Current number of admission requests being served, per webhook",
      labelNames: ["webhook"],
      registers,
    });
  }

  /** Records one answered request. */
  observe(webhook: string, cluster: string, code: number, seconds: number): void {
    this.requests.inc({ webhook, code: String(code), cluster });
    this.latency.observe({ webhook, cluster }, seconds);
  }
}

// The admission port's Prometheus series, with controller-runtime's names and a cluster label from a bounded set.

import * as prom from "../../util/prometheus.ts";

/** The label value of every answer given before a request reached a webhook of a served cluster. */
export const UNROUTED = "unknown";
/** The codes answered before routing: a path naming no webhook or an unserved cluster, and a method other than POST. */
const UNROUTED_CODES = [404, 405] as const;

/**
 * Counts and times every admission request the hub answers.
 *
 * Guarantees: the label values come from bounded sets, never from a request as such: `webhook` is a webhook the hub
 * serves, `cluster` a cluster it serves (the caller checks both first), `code` one of the statuses the server answers;
 * every answer given before that check (404, 405) is counted in one series per code labelled `unknown`, which exist
 * from the start, so no request can add a series. `forgetCluster` removes a cluster's series when it is no longer
 * served, so the series follow the clusters served, not every cluster ever served.
 */
export class WebhookMetrics {
  /** Labels: webhook (`operator/type/id`), code (the HTTP status answered), cluster. */
  readonly requests: prom.Counter<"webhook" | "code" | "cluster">;
  /** Labels: webhook, cluster. */
  readonly latency: prom.Histogram<"webhook" | "cluster">;
  /** Labels: webhook. */
  readonly inFlight: prom.Gauge<"webhook">;
  /** Per cluster, the `webhook` and `code` label pairs it has series under. */
  readonly #labelled = new Map<string, Map<string, { webhook: string; code: string }>>();

  constructor(registry: prom.MetricRegistry) {
    const registers = [registry];
    this.requests = new prom.Counter({
      name: "controller_runtime_webhook_requests_total",
      help: "Total number of admission requests by HTTP status code, per webhook and calling cluster",
      labelNames: ["webhook", "code", "cluster"],
      registers,
    });
    this.latency = new prom.Histogram({
      name: "controller_runtime_webhook_latency_seconds",
      help: "Histogram of the latency of processing admission requests, per webhook and calling cluster",
      labelNames: ["webhook", "cluster"],
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    });
    this.inFlight = new prom.Gauge({
      name: "controller_runtime_webhook_requests_in_flight",
      help: "Current number of admission requests being served, per webhook",
      labelNames: ["webhook"],
      registers,
    });
    for (const code of UNROUTED_CODES) {
      this.requests.inc({ webhook: UNROUTED, code: String(code), cluster: UNROUTED }, 0);
    }
  }

  /** Records one answered request of a webhook served, called by a cluster served. */
  observe(webhook: string, cluster: string, code: number, seconds: number): void {
    const key = `${webhook} ${code}`;
    let pairs = this.#labelled.get(cluster);
    if (!pairs) this.#labelled.set(cluster, pairs = new Map());
    if (!pairs.has(key)) pairs.set(key, { webhook, code: String(code) });
    this.requests.inc({ webhook, code: String(code), cluster });
    this.latency.observe({ webhook, cluster }, seconds);
  }

  /** Records one request answered before it reached a webhook (404 or 405): no label from the request. */
  unrouted(code: (typeof UNROUTED_CODES)[number]): void {
    this.requests.inc({ webhook: UNROUTED, code: String(code), cluster: UNROUTED });
  }

  /** Removes every series of `cluster` (no longer served). */
  forgetCluster(cluster: string): void {
    const pairs = this.#labelled.get(cluster);
    if (!pairs) return;
    this.#labelled.delete(cluster);
    const webhooks = new Set<string>();
    for (const { webhook, code } of pairs.values()) {
      this.requests.remove({ webhook, code, cluster });
      webhooks.add(webhook);
    }
    for (const webhook of webhooks) this.latency.remove({ webhook, cluster });
  }
}

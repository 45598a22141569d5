// Prometheus metrics with controller-runtime and workqueue names, each labelled by cluster.

import client from "prom-client";
import type { ClusterHealth } from "./cluster_worker.ts";
import { CounterSeries, GaugeSeries, HistogramSeries } from "./metric_series.ts";

const STATES = [
  "registering",
  "connecting",
  "syncing",
  "watching",
  "unreachable",
  "unauthorized",
  "forbidden",
  "missing-crd",
] as const;

/**
 * One registry per Hub (no global default registry), so several hubs in one process, as in tests,
 * never share counters.
 */
export class HubMetrics {
  readonly registry = new client.Registry();
  /** Labels: controller, cluster, result. */
  readonly reconcileTotal: CounterSeries;
  /** Labels: controller, cluster. */
  readonly reconcileErrors: CounterSeries;
  /** Labels: controller, cluster. */
  readonly reconcileTime: HistogramSeries;
  /** Labels: name, cluster. */
  readonly depth: GaugeSeries;
  /** Labels: name, cluster. */
  readonly adds: CounterSeries;
  /** Labels: name, cluster. */
  readonly queueDuration: HistogramSeries;
  /** Labels: name, cluster. */
  readonly retries: CounterSeries;
  /** Labels: cluster, code, method. */
  readonly requests: CounterSeries;
  readonly leader: client.Gauge<"name">;

  constructor(health: () => Record<string, ClusterHealth>) {
    const registers = [this.registry];
    const r = this.registry;
    // The families updated per object or per request are our plain-number series (metric_series.ts).
    this.reconcileTotal = new CounterSeries(
      r,
      "controller_runtime_reconcile_total",
      "Total number of reconciliations per controller and cluster",
      ["controller", "cluster", "result"],
    );
    this.reconcileErrors = new CounterSeries(
      r,
      "controller_runtime_reconcile_errors_total",
      "Total number of reconciliation errors per controller and cluster",
      ["controller", "cluster"],
    );
    this.reconcileTime = new HistogramSeries(
      r,
      "controller_runtime_reconcile_time_seconds",
      "Length of time per reconciliation per controller and cluster",
      ["controller", "cluster"],
      [0.0005, 0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    );
    this.depth = new GaugeSeries(r, "workqueue_depth", "Current depth of workqueue per cluster", ["name", "cluster"]);
    this.adds = new CounterSeries(
      r,
      "workqueue_adds_total",
      "Total number of adds handled by workqueue per cluster",
      ["name", "cluster"],
    );
    this.queueDuration = new HistogramSeries(
      r,
      "workqueue_queue_duration_seconds",
      "How long in seconds an item stays in workqueue before being requested",
      ["name", "cluster"],
      [0.0001, 0.001, 0.01, 0.1, 1, 10, 100, 1000],
    );
    this.retries = new CounterSeries(
      r,
      "workqueue_retries_total",
      "Total number of retries handled by workqueue per cluster",
      ["name", "cluster"],
    );
    this.requests = new CounterSeries(
      r,
      "rest_client_requests_total",
      "Number of HTTP requests to each cluster, partitioned by status code and method",
      ["cluster", "code", "method"],
    );
    this.leader = new client.Gauge({
      name: "leader_election_master_status",
      help: "1 while this process holds the lease with the given name, 0 otherwise",
      labelNames: ["name"],
      registers,
    });
    new client.Gauge({
      name: "hub_cluster_state",
      help: "1 for the state each cluster is in, 0 for the others",
      labelNames: ["cluster", "state"],
      registers,
      collect() {
        this.reset();
        for (const [cluster, h] of Object.entries(health())) {
          for (const state of STATES) this.set({ cluster, state }, h.state === state ? 1 : 0);
        }
      },
    });
    new client.Gauge({
      name: "hub_cluster_last_event_age_seconds",
      help: "Seconds since the cluster's watch last delivered an event or bookmark",
      labelNames: ["cluster"],
      registers,
      collect() {
        this.reset();
        for (const [cluster, h] of Object.entries(health())) {
          if (h.lastEventAgeSeconds !== null) this.set({ cluster }, h.lastEventAgeSeconds);
        }
      },
    });
    new client.Gauge({
      name: "hub_cluster_objects",
      help: "Objects held in the cluster's store",
      labelNames: ["cluster"],
      registers,
      collect() {
        this.reset();
        for (const [cluster, h] of Object.entries(health())) this.set({ cluster }, h.objects);
      },
    });
    new client.Counter({
      name: "hub_watch_connect_attempts_total",
      help: "List and watch requests started per cluster",
      labelNames: ["cluster"],
      registers,
      collect() {
        this.reset();
        for (const [cluster, h] of Object.entries(health())) this.inc({ cluster }, h.connectAttempts);
      },
    });
  }

  /** Drops every series of a disengaged cluster. */
  forgetCluster(cluster: string): void {
    for (
      const f of [
        this.reconcileTotal,
        this.reconcileErrors,
        this.reconcileTime,
        this.requests,
        this.depth,
        this.adds,
        this.queueDuration,
        this.retries,
      ]
    ) f.removeWhere("cluster", cluster);
  }
}

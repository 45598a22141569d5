// Prometheus metrics with controller-runtime and workqueue names, each labelled by cluster.

import client from "prom-client";
import type { ClusterHealth } from "./cluster_worker.ts";

const STATES = [
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
  readonly reconcileTotal: client.Counter<"controller" | "cluster" | "result">;
  readonly reconcileErrors: client.Counter<"controller" | "cluster">;
  readonly reconcileTime: client.Histogram<"controller" | "cluster">;
  readonly depth: client.Gauge<"name" | "cluster">;
  readonly adds: client.Counter<"name" | "cluster">;
  readonly queueDuration: client.Histogram<"name" | "cluster">;
  readonly retries: client.Counter<"name" | "cluster">;
  readonly requests: client.Counter<"cluster" | "code" | "method">;
  readonly leader: client.Gauge<"name">;

  constructor(health: () => Record<string, ClusterHealth>) {
    const registers = [this.registry];
    this.reconcileTotal = new client.Counter({
      name: "controller_runtime_reconcile_total",
      help: "Total number of reconciliations per controller and cluster",
      labelNames: ["controller", "cluster", "result"],
      registers,
    });
    this.reconcileErrors = new client.Counter({
      name: "controller_runtime_reconcile_errors_total",
      help: "Total number of reconciliation errors per controller and cluster",
      labelNames: ["controller", "cluster"],
      registers,
    });
    this.reconcileTime = new client.Histogram({
      name: "controller_runtime_reconcile_time_seconds",
      help: "Length of time per reconciliation per controller and cluster",
      labelNames: ["controller", "cluster"],
      buckets: [0.0005, 0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers,
    });
    this.depth = new client.Gauge({
      name: "workqueue_depth",
      help: "Current depth of workqueue per cluster",
      labelNames: ["name", "cluster"],
      registers,
    });
    this.adds = new client.Counter({
      name: "workqueue_adds_total",
      help: "Total number of adds handled by workqueue per cluster",
      labelNames: ["name", "cluster"],
      registers,
    });
    this.queueDuration = new client.Histogram({
      name: "workqueue_queue_duration_seconds",
      help: "How long in seconds an item stays in workqueue before being requested",
      labelNames: ["name", "cluster"],
      buckets: [0.0001, 0.001, 0.01, 0.1, 1, 10, 100, 1000],
      registers,
    });
    this.retries = new client.Counter({
      name: "workqueue_retries_total",
      help: "Total number of retries handled by workqueue per cluster",
      labelNames: ["name", "cluster"],
      registers,
    });
    this.requests = new client.Counter({
      name: "rest_client_requests_total",
      help: "Number of HTTP requests to each cluster, partitioned by status code and method",
      labelNames: ["cluster", "code", "method"],
      registers,
    });
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
  async forgetCluster(cluster: string): Promise<void> {
    const metrics = [
      this.reconcileTotal,
      this.reconcileErrors,
      this.reconcileTime,
      this.requests,
      this.depth,
      this.adds,
      this.queueDuration,
      this.retries,
    ] as unknown as client.Metric<string>[];
    for (const m of metrics) {
      const seen = new Set<string>();
      for (const v of (await m.get()).values) {
        const labels = { ...v.labels } as Record<string, string | number>;
        delete labels.le;
        const id = JSON.stringify(labels);
        if (labels.cluster !== cluster || seen.has(id)) continue;
        seen.add(id);
        (m as unknown as { remove(l: Record<string, string | number>): void }).remove(labels);
      }
    }
  }
}

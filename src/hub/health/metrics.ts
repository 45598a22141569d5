// Prometheus metrics with controller-runtime and workqueue names, each labelled by cluster.

import * as prom from "../../util/prometheus.ts";
import { HEALTH_STATES, type HealthState } from "../../runtime/mod.ts";
import type { ClusterHealth } from "./cluster_health.ts";
import { CounterSeries, GaugeSeries, HistogramSeries } from "./metric_series.ts";

/** States in which a cluster has answered as a Kubernetes API with the hub's credentials accepted: reached. */
const REACHED_STATES: ReadonlySet<HealthState> = new Set([
  "watching",
  "syncing",
  "missing-crd",
  "too-large",
  "forbidden",
]);

/** The clusters' health, read once per scrape, and which clusters get series of their own. */
interface Scrape {
  clusters: Record<string, ClusterHealth>;
  own: (cluster: string) => boolean;
}

/** A registry that reads the clusters' health once per scrape, however many families use it. */
class ScrapeRegistry extends prom.MetricRegistry {
  #depth = 0;
  #scrape: Scrape | undefined;
  readonly #read: () => Scrape;

  constructor(read: () => Scrape) {
    super();
    this.#read = read;
  }

  /** The scrape in progress's reading, or a fresh one outside a scrape. */
  scrape(): Scrape {
    if (this.#depth === 0) return this.#read();
    return this.#scrape ??= this.#read();
  }

  override async metrics(): Promise<string> {
    this.#depth++;
    try {
      return await super.metrics();
    } finally {
      if (--this.#depth === 0) this.#scrape = undefined;
    }
  }
}

/**
 * One registry per Hub (no global default registry), so several hubs in one process, as in tests,
 * never share counters.
 *
 * Guarantees:
 * - a cluster has series of its own (`cluster="NAME"`) when it holds readiness back (`gatesReadiness`: the command
 *   line's clusters) or once it has been reached since it was engaged (a state in which it answered with the hub's
 *   credentials accepted: watching, syncing, missing-crd, too-large, forbidden); every other cluster (a Secret or
 *   profile at a server that never answered, or refuses the credentials) is only counted, in
 *   `hub_clusters_by_state{provider,state}`, and its request and queue series are folded into `cluster=""`: what
 *   strangers register cannot add series beyond a fixed set;
 * - every engaged or held cluster is counted in `hub_clusters_by_state`, by provider (a fixed set) and state;
 * - the clusters' health is read once per scrape.
 */
export class HubMetrics {
  readonly registry: prom.MetricRegistry;
  /** Clusters reached since they were engaged (forgotten at disengage). */
  readonly #reached = new Set<string>();
  /** Labels: controller, cluster, result. */
  readonly reconcileTotal: CounterSeries;
  /** Labels: controller, cluster. */
  readonly reconcileErrors: CounterSeries;
  /** Labels: controller, cluster. */
  readonly reconcileTime: HistogramSeries;
  /** Labels: name (the operator), cluster. */
  readonly depth: GaugeSeries;
  /** Labels: name, cluster. */
  readonly adds: CounterSeries;
  /** Labels: name, cluster. */
  readonly queueDuration: HistogramSeries;
  /** Labels: name, cluster. */
  readonly retries: CounterSeries;
  /** Labels: cluster, code, method. */
  readonly requests: CounterSeries;
  readonly leader: prom.Gauge<"name">;

  constructor(health: () => Record<string, ClusterHealth>) {
    const reg = new ScrapeRegistry(() => this.#read(health()));
    this.registry = reg;
    const registers = [this.registry];
    const r = this.registry;
    /** The clusters with series of their own, each a cluster entry in health now. */
    const own = () => {
      const { clusters, own } = reg.scrape();
      return Object.entries(clusters).filter(([name]) => own(name));
    };
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
    this.leader = new prom.Gauge({
      name: "leader_election_master_status",
      help: "1 while this process holds the lease with the given name, 0 otherwise",
      labelNames: ["name"],
      registers,
    });
    new prom.Gauge({
      name: "hub_cluster_state",
      help: "1 for the state each cluster is in, 0 for the others",
      labelNames: ["cluster", "state"],
      registers,
      collect() {
        this.reset();
        for (const [cluster, h] of own()) {
          for (const state of HEALTH_STATES) this.set({ cluster, state }, h.state === state ? 1 : 0);
        }
      },
    });
    new prom.Gauge({
      name: "hub_operator_state",
      help: "1 for the state each operator is in, in each cluster, 0 for the others",
      labelNames: ["cluster", "controller", "state"],
      registers,
      collect() {
        this.reset();
        for (const [cluster, h] of own()) {
          for (const [controller, o] of Object.entries(h.operators)) {
            for (const state of HEALTH_STATES) this.set({ cluster, controller, state }, o.state === state ? 1 : 0);
          }
        }
      },
    });
    new prom.Gauge({
      name: "hub_cluster_last_event_age_seconds",
      help: "Seconds since the cluster's watch last delivered an event or bookmark",
      labelNames: ["cluster"],
      registers,
      collect() {
        this.reset();
        for (const [cluster, h] of own()) {
          if (h.lastEventAgeSeconds !== null) this.set({ cluster }, h.lastEventAgeSeconds);
        }
      },
    });
    new prom.Gauge({
      name: "hub_cluster_objects",
      help: "Objects held in the cluster's store",
      labelNames: ["cluster"],
      registers,
      collect() {
        this.reset();
        for (const [cluster, h] of own()) this.set({ cluster }, h.objects);
      },
    });
    new prom.Counter({
      name: "hub_watch_connect_attempts_total",
      help: "List and watch requests started per cluster",
      labelNames: ["cluster"],
      registers,
      collect() {
        this.reset();
        for (const [cluster, h] of own()) this.inc({ cluster }, h.connectAttempts);
      },
    });
    /** Providers seen (a fixed set in code: flag, folder, secret, cluster-profile, cluster-api). */
    const providers = new Set<string>();
    new prom.Gauge({
      name: "hub_clusters_by_state",
      help: "Clusters engaged or held, by the provider that registered them and their state (every cluster, " +
        "including those without series of their own)",
      labelNames: ["provider", "state"],
      registers,
      collect() {
        this.reset();
        // Every provider seen since start keeps its series (at 0 once its clusters are gone).
        const counts = new Map<string, Map<HealthState, number>>();
        const zero = () => new Map(HEALTH_STATES.map((st) => [st, 0]));
        for (const p of providers) counts.set(p, zero());
        for (const h of Object.values(reg.scrape().clusters)) {
          const provider = h.provider ?? "flag";
          providers.add(provider);
          let m = counts.get(provider);
          if (!m) counts.set(provider, m = zero());
          m.set(h.state, m.get(h.state)! + 1);
        }
        for (const [provider, m] of counts) for (const [state, n] of m) this.set({ provider, state }, n);
      },
    });
    for (const f of this.#perCluster()) f.foldClusters(() => reg.scrape().own);
  }

  /** The clusters' health now, and which of them get series of their own (see the class's guarantees). */
  #read(clusters: Record<string, ClusterHealth>): Scrape {
    for (const [name, h] of Object.entries(clusters)) {
      if (REACHED_STATES.has(h.state) || h.lastEventAgeSeconds !== null) this.#reached.add(name);
    }
    const reached = this.#reached;
    return {
      clusters,
      // A cluster not in health (just disengaged, or never engaged) keeps what it has: it is not a stranger's.
      own: (name) => {
        const h = clusters[name];
        return h === undefined || h.gatesReadiness !== false || reached.has(name);
      },
    };
  }

  /** The families with a `cluster` label: folded for strangers' clusters, dropped for a disengaged one. */
  #perCluster() {
    return [
      this.reconcileTotal,
      this.reconcileErrors,
      this.reconcileTime,
      this.requests,
      this.depth,
      this.adds,
      this.queueDuration,
      this.retries,
    ];
  }

  /** Drops every series of a disengaged cluster. */
  forgetCluster(cluster: string): void {
    this.#reached.delete(cluster);
    for (const f of this.#perCluster()) f.removeWhere("cluster", cluster);
  }
}

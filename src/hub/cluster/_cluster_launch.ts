// Launches the Hub's engaged clusters: each one's options (trusted or not: its logs, its first contact) and its run.

import type { ClusterAccess } from "../../kube/mod.ts";
import { TokenBucket } from "../../queue/mod.ts";
import type { Operator } from "../../runtime/mod.ts";
import { type Clock, LogBurst, Semaphore } from "../../util/mod.ts";
import { EngagedCluster } from "./engaged_cluster.ts";
import type { EngagedClusterOptions } from "./engaged_cluster_options.ts";
import { leasePermissions } from "../leadership/_home_lease.ts";
import { connectDetailAtDebug } from "./_untrusted_errors.ts";
import type { HubLimits } from "../hub_limits.ts";
import type { HubOptions } from "../hub_options.ts";

/** An engaged cluster as the Hub holds it: `done` settles once its run ended (failures logged, never thrown). */
export interface Engaged {
  cluster: EngagedCluster;
  abort: AbortController;
  done: Promise<void>;
}

/** What every launch shares: the Hub's options, limits and clock, and the Hub's side of each cluster. */
export interface ClusterLauncherOptions {
  hub: HubOptions;
  /** The limits in effect, read at each launch. */
  limits: HubLimits;
  clock: Clock;
  /** Each response from a cluster's API server (counted in HubMetrics.requests). */
  onResponse(cluster: string, info: { method: string; code: number | "error"; durationMs: number }): void;
  /** The operators hosted now. */
  operators(): Operator[];
  onChange: EngagedClusterOptions["onChange"];
  lookup: EngagedClusterOptions["lookup"];
  clusterNames(): string[];
}

/**
 * Builds and starts engaged clusters.
 *
 * Guarantees: every cluster launched here shares one pre-flight gate (HubLimits.preflightConcurrency) and gets its
 * own API budget; an untrusted cluster's connection failures are logged as one generic reason (the detail at debug),
 * and its first contact's failures go to one summarised stream shared by every untrusted cluster (a few lines per
 * 10 s, see EngagedClusterOptions.contactLog); a trusted one keeps the Hub's logger for both.
 */
export class ClusterLauncher {
  readonly #o: ClusterLauncherOptions;
  /** Bounds the clusters in pre-flight at once (see HubLimits.preflightConcurrency). */
  readonly #preflightGate: Semaphore;
  /** The first-contact failures of untrusted clusters, summarised together (see EngagedClusterOptions.contactLog). */
  readonly #untrustedContact: LogBurst;

  constructor(options: ClusterLauncherOptions) {
    this.#o = options;
    this.#preflightGate = new Semaphore(options.limits.preflightConcurrency);
    this.#untrustedContact = new LogBurst({
      logger: connectDetailAtDebug(options.hub.logger),
      level: "warn",
      msg: "cluster not reachable",
      clock: options.clock,
    });
  }

  /** Builds `name` and starts it under `parent` (and its own abort); `trusted` when the command line defines it. */
  launch(name: string, access: ClusterAccess, parent: AbortSignal, trusted: boolean): Engaged {
    const { hub, limits, clock } = this.#o;
    const abort = new AbortController();
    const onParent = () => abort.abort();
    parent.addEventListener("abort", onParent, { once: true });
    const cluster = new EngagedCluster(name, access, {
      operators: this.#o.operators(),
      namespaces: hub.namespaces ?? [],
      extraPermissions: [
        ...(hub.leaderElection?.cluster === name ? leasePermissions(hub.leaderElection) : []),
        ...(hub.clusterPermissions ?? []),
      ],
      onChange: this.#o.onChange,
      lookup: this.#o.lookup,
      clusterNames: this.#o.clusterNames,
      preflightGate: this.#preflightGate,
      apiBudget: new TokenBucket(limits.clusterQps, limits.clusterBurst, { clock }),
      eventLevel: hub.eventLevel,
      idleTimeoutMs: limits.watchIdleTimeoutMs,
      requestTimeoutMs: limits.requestTimeoutMs,
      maxObjectBytes: limits.maxObjectBytes,
      http2: hub.http2,
      checkReads: hub.checkReads,
      fetch: hub.fetch,
      clock,
      // An untrusted cluster's connection failures are logged as one generic reason; the detail only at debug.
      logger: trusted ? hub.logger : connectDetailAtDebug(hub.logger),
      // ... and its first contact's failures in one summarised stream for all of them (a few lines per 10 s).
      contactLog: trusted ? undefined : this.#untrustedContact,
      onResponse: (info) => this.#o.onResponse(name, info),
    });
    const done = cluster.start(abort.signal).catch((err) => {
      hub.logger.error("engaged cluster stopped unexpectedly", { cluster: name, error: err });
    }).finally(() => parent.removeEventListener("abort", onParent));
    return { cluster, abort, done };
  }

  /** Writes the untrusted clusters' first-contact summary still held (at the Hub's stop). */
  flush(): void {
    this.#untrustedContact.flush();
  }
}

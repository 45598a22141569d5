// The Hub's health document, assembled from its state (clusters engaged, pending and held, readiness, shard owners,
// the controller, the sections shown), and which clusters the command line defines (trusted).

import type { FairWorkQueue } from "../../queue/mod.ts";
import type { Controller } from "../../runtime/mod.ts";
import type { Clock } from "../../util/mod.ts";
import type { ClusterHealth, ProviderHealth } from "./cluster_health.ts";
import type { EngagedCluster } from "../cluster/engaged_cluster.ts";
import { rollUpHealth } from "./_health_rollup.ts";
import type { HomeLease } from "../leadership/_home_lease.ts";
import type { QueueSeries } from "./_queue_series.ts";
import { isCommandLine, type ReadinessRule } from "./_readiness_rule.ts";
import { withGenericAdmissionErrors } from "../cluster/_untrusted_errors.ts";
import {
  type ClusterRegistration,
  type HubHealth,
  type HubShardView,
  notEngagedHealth,
  registrationOf,
  type RegistrationProblem,
} from "./hub_health.ts";
import type { HubLimits } from "../hub_limits.ts";

/** The Hub's state health is read from, each time it is built (the maps are the Hub's own, read, never changed). */
export interface HubHealthParts {
  /** The clusters engaged (launched). */
  clusters: ReadonlyMap<string, { cluster: EngagedCluster }>;
  /** The clusters engaged before `start`, not launched yet. */
  pending: ReadonlyMap<string, unknown>;
  registrations: ReadonlyMap<string, ClusterRegistration>;
  problems: ReadonlyMap<string, RegistrationProblem>;
  /** The operators hosted, by name. */
  operators: ReadonlyMap<string, unknown>;
  series: QueueSeries;
  queue: FairWorkQueue;
  controller: Controller;
  limits: HubLimits;
  clock: Clock;
  readiness: ReadinessRule;
  lease?: HomeLease;
  /** Whether the Hub's `start` runs. */
  running(): boolean;
}

/**
 * Builds the Hub's health (Hub.health) and tells whether a cluster is trusted.
 *
 * Guarantees: every cluster engaged, pending or held with a problem has one entry (an engaged or pending one wins
 * over a problem of the same name), carrying its registration; readiness and the untrusted clusters' generic errors
 * are applied to each entry (ReadinessRule) and to the admission section; the sections set here (`shard`,
 * `providers`, `admission`) are read each time health is built.
 */
export class HubHealthView {
  readonly #p: HubHealthParts;
  /** With --shard: where each cluster's owner and the `shard` section are read. */
  shard: HubShardView | undefined;
  /** The `providers` section, read each time. */
  providers: (() => Record<string, ProviderHealth>) | undefined;
  /** The `admission` section (the webhook installer's state), read each time. */
  admission: (() => Record<string, unknown>) | undefined;

  constructor(parts: HubHealthParts) {
    this.#p = parts;
  }

  /** Whether the command line defines `name` (trusted): see isCommandLine. */
  commandLine(name: string): boolean {
    const r = this.#p.registrations.get(name);
    if (r) return isCommandLine(r);
    const engaged = this.#p.clusters.has(name) || this.#p.pending.has(name);
    return isCommandLine(engaged ? undefined : this.#p.problems.get(name));
  }

  /** The aggregated health of every cluster and of the shared controller. */
  build(): HubHealth {
    const p = this.#p;
    const wedgedAfterMs = p.limits.watchIdleTimeoutMs * 2 + 60_000;
    const clusters: Record<string, ClusterHealth> = {};
    for (const [name, e] of p.clusters) {
      clusters[name] = e.cluster.health((op) => p.series.depth(name, op), p.queue.lenFor(name), wedgedAfterMs);
    }
    for (const name of p.pending.keys()) clusters[name] = notEngagedHealth(p.operators.keys(), null);
    for (const [name, problem] of p.problems) {
      if (!clusters[name]) {
        clusters[name] = { ...notEngagedHealth(p.operators.keys(), problem.error), ...registrationOf(problem) };
      }
    }
    for (const [name, r] of p.registrations) {
      if (clusters[name]) Object.assign(clusters[name], registrationOf(r));
    }
    for (const name in clusters) clusters[name] = p.readiness.apply(name, clusters[name], this.commandLine(name));
    const shard = this.shard?.status();
    if (shard) { for (const [name, h] of Object.entries(clusters)) h.owner = shard.clusters[name] ?? null; }
    const controller = {
      inFlight: p.controller.inFlight,
      queued: p.queue.len(),
      idleForMs: p.clock.now() - p.controller.lastCompletedAt,
      reconcileTimeoutMs: p.limits.reconcileTimeoutMs,
      running: p.running(),
    };
    const providers = this.providers?.();
    return {
      ...rollUpHealth(clusters, controller, { sharded: shard !== undefined, providers }),
      ...(p.lease ? { leaderElection: p.lease.snapshot() } : {}),
      ...(providers ? { providers } : {}),
      ...(shard ? { shard } : {}),
      ...(this.admission
        ? { admission: withGenericAdmissionErrors(this.admission(), (name) => !this.commandLine(name)) }
        : {}),
    };
  }
}

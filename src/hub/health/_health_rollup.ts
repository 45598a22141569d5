// The hub-wide verdict of the health document: status, readiness and the shared controller's progress.

import type { ClusterHealth, ProviderHealth } from "./cluster_health.ts";
import type { HubHealth } from "./hub_health.ts";

/** The shared controller as health sees it. */
export interface ControllerProgress {
  /** Reconciles running now. */
  inFlight: number;
  /** Keys queued in the shared queue. */
  queued: number;
  /** Milliseconds since a reconcile last completed. */
  idleForMs: number;
  /** A reconcile's time limit (HubLimits.reconcileTimeoutMs). */
  reconcileTimeoutMs: number;
  /** Whether the hub runs (a hub not started is never wedged). */
  running: boolean;
}

/** What the verdict needs besides the clusters and the controller. */
export interface RollUpOptions {
  /** With --shard: a replica that owns no cluster is standing by, and ready. */
  sharded?: boolean;
  /** The cluster providers at work; each one's first read of its sources holds readiness back. */
  providers?: Record<string, ProviderHealth>;
}

/**
 * The first fields of the health document, from every cluster's entry and the controller's progress.
 *
 * Guarantees: `failing` when the controller or a cluster's watch is wedged, else `degraded` when a cluster is not
 * `watching`, else `ok`; the controller is wedged when keys wait, nothing runs and nothing completed for twice the
 * reconcile timeout plus a minute; `ready` once every entry that gates readiness (`gatesReadiness` not false: the
 * Hub sets it) synced and every cluster provider finished its first read (until then the hub does not know every
 * cluster it should serve) and there is one cluster at least, or, with `sharded`, also with none (a shard replica
 * that owns nothing is standing by); a cluster that does not gate readiness never holds it back, whatever its state;
 * `notReady` names the clusters, sorted, then the providers (`<name> provider`; a cluster name has no space), that
 * hold readiness back, and is present only when not empty.
 */
export function rollUpHealth(
  clusters: Record<string, ClusterHealth>,
  controller: ControllerProgress,
  options: RollUpOptions = {},
): Pick<HubHealth, "status" | "ready" | "clusters" | "notReady" | "controller"> {
  const { inFlight, queued, idleForMs, reconcileTimeoutMs, running } = controller;
  const controllerWedged = queued > 0 && inFlight === 0 && idleForMs > reconcileTimeoutMs * 2 + 60_000 && running;
  const waiting: string[] = [];
  let failing = controllerWedged;
  let degraded = false;
  let count = 0;
  for (const name in clusters) {
    const h = clusters[name];
    count++;
    if (!h.synced && h.gatesReadiness !== false) waiting.push(name);
    if (h.wedged) failing = true;
    if (h.state !== "watching") degraded = true;
  }
  const notReady = [
    ...waiting.sort(),
    ...Object.entries(options.providers ?? {}).filter(([, p]) => !p.synced).map(([n]) => `${n} provider`),
  ];
  return {
    status: failing ? "failing" : degraded ? "degraded" : "ok",
    ready: notReady.length === 0 && (count > 0 || options.sharded === true),
    clusters,
    ...(notReady.length ? { notReady } : {}),
    controller: { inFlight, queued, wedged: controllerWedged },
  };
}

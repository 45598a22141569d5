// The public body of /healthz and /readyz: names and states only, a bounded number of bytes, safe for any client.

import type { HubHealth, HubStatus } from "../hub.ts";

/** The most clusters a probe body names (in `clusters`, and in `notReady`); the summary counts every one. */
export const PROBE_MAX_CLUSTERS = 50;
/** The longest cluster or operator name a probe body shows (a Kubernetes object name's limit); longer ones are counted. */
export const PROBE_MAX_NAME = 253;
/** The most operators named per cluster (the command line chooses them, so this is rarely reached). */
const PROBE_MAX_OPERATORS = 20;

/** Every cluster counted, whether or not the body names it. */
export interface ProbeSummary {
  /** Clusters in the health document. */
  clusters: number;
  /** Of them, those named in `clusters`. */
  listed: number;
  /** Of them, those left out (`clusters` − `listed`): /status has every one, behind authentication. */
  omitted: number;
  /** Clusters by state. */
  states: Record<string, number>;
  /** Names holding readiness back, clusters and providers; `notReady` lists the first PROBE_MAX_CLUSTERS. */
  notReady: number;
}

/** What the probes answer. Everything else (errors, servers, permissions, per-cluster counts) is only on /status. */
export interface ProbeBody {
  status: HubStatus;
  ready: boolean;
  notReady: string[];
  clusters: Record<string, { state: string; operators?: Record<string, string> }>;
  summary: ProbeSummary;
}

/**
 * Narrows the health document to the probe body.
 *
 * Guarantees:
 * - built field by field from an allow-list (status, ready, notReady, each cluster's and operator's state, counts of
 *   clusters), so a field later added to the health document never leaks to the probes by accident;
 * - bounded whatever the number of clusters: at most PROBE_MAX_CLUSTERS clusters are named, first those holding
 *   readiness back, then the others that gate readiness (the command line's), then the rest, each group by name;
 *   `notReady` names at most PROBE_MAX_CLUSTERS; a name longer than PROBE_MAX_NAME is never written (it is counted);
 *   `summary` counts every cluster by state, and how many were left out. So 10,000 registered clusters answer about
 *   the same few kilobytes as ten.
 */
export function probeView(health: HubHealth): ProbeBody {
  const states: Record<string, number> = {};
  const waiting: string[] = [];
  const gating: string[] = [];
  const rest: string[] = [];
  const notReady = new Set(health.notReady ?? []);
  let count = 0;
  for (const name in health.clusters) {
    const entry = health.clusters[name];
    count++;
    const state = String(entry.state);
    states[state] = (states[state] ?? 0) + 1;
    if (name.length > PROBE_MAX_NAME) continue;
    if (notReady.has(name)) waiting.push(name);
    else if (entry.gatesReadiness !== false) gating.push(name);
    else rest.push(name);
  }
  const named = pick(PROBE_MAX_CLUSTERS, waiting, gating, rest);
  const clusters: ProbeBody["clusters"] = {};
  for (const name of named) {
    const entry = health.clusters[name];
    const out: ProbeBody["clusters"][string] = { state: String(entry.state) };
    // Per-operator entries arrive with several operators per hub; read them structurally so both shapes work.
    const operators = (entry as { operators?: Record<string, { state?: unknown }> }).operators;
    if (operators && typeof operators === "object") {
      out.operators = {};
      let n = 0;
      for (const [op, o] of Object.entries(operators)) {
        if (op.length > PROBE_MAX_NAME) continue;
        if (++n > PROBE_MAX_OPERATORS) break;
        out.operators[op] = String(o?.state ?? "unknown");
      }
    }
    clusters[name] = out;
  }
  return {
    status: health.status,
    ready: health.ready,
    notReady: (health.notReady ?? []).filter((n) => n.length <= PROBE_MAX_NAME).slice(0, PROBE_MAX_CLUSTERS),
    clusters,
    summary: { clusters: count, listed: named.length, omitted: count - named.length, states, notReady: notReady.size },
  };
}

/** The first `max` names of the groups in order, each group sorted (only as much of it as is taken). */
function pick(max: number, ...groups: string[][]): string[] {
  const out: string[] = [];
  for (const g of groups) {
    if (out.length >= max) break;
    out.push(...g.sort().slice(0, max - out.length));
  }
  return out;
}

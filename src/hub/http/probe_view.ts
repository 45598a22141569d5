// The public body of /healthz and /readyz: names and states only, safe for any client that can reach the port.

import type { HubHealth, HubStatus } from "../hub.ts";

/** What the probes answer. Everything else (errors, servers, permissions, counts) is only on /status. */
export interface ProbeBody {
  status: HubStatus;
  ready: boolean;
  notReady: string[];
  clusters: Record<string, { state: string; operators?: Record<string, string> }>;
}

/**
 * Narrows the health document to the probe body.
 *
 * Guarantees: built field by field from an allow-list (status, ready, notReady, each cluster's and operator's
 * state), so a field later added to the health document never leaks to the probes by accident.
 */
export function probeView(health: HubHealth): ProbeBody {
  const clusters: ProbeBody["clusters"] = {};
  for (const [name, entry] of Object.entries(health.clusters)) {
    const out: ProbeBody["clusters"][string] = { state: String(entry.state) };
    // Per-operator entries arrive with several operators per hub; read them structurally so both shapes work.
    const operators = (entry as { operators?: Record<string, { state?: unknown }> }).operators;
    if (operators && typeof operators === "object") {
      out.operators = {};
      for (const [op, o] of Object.entries(operators)) out.operators[op] = String(o?.state ?? "unknown");
    }
    clusters[name] = out;
  }
  return {
    status: health.status,
    ready: health.ready,
    notReady: [...(health.notReady ?? [])],
    clusters,
  };
}

// The health endpoint on the address --liveness names: the two probes, plus /status and /metrics for local use. Read-only.

import type { Logger } from "../../util/mod.ts";
import type { ConnectionLimits } from "./connection_gate.ts";
import { serveGated } from "./gated_server.ts";
import type { Hub } from "../hub.ts";
import { HealthMemo } from "../health/_health_memo.ts";
import { type ProbeBody, probeView } from "../health/probe_view.ts";
import type { ReconcileHistory } from "../health/reconcile_history.ts";
import { answerMetrics, answerStatus } from "../health/status_routes.ts";

export interface HealthServerOptions {
  hostname: string;
  port: number;
  logger: Logger;
  /**
   * Also serve /status and /metrics here, unauthenticated (default true): local use and `deno task demo`. False
   * when --metrics-bind-address serves them behind authentication: this port then keeps just the probes.
   */
  statusAndMetrics?: boolean;
  /** The reconcile rates /status carries for the page's sparklines. */
  history?: ReconcileHistory;
  /** Called once the socket is bound, with the actual port (useful with port 0). */
  onListen?(addr: { hostname: string; port: number }): void;
  /** Header timeout, connection cap and lifetime of the port (defaults: connection_gate.ts). */
  limits?: ConnectionLimits;
}

/** Thrown when the health port cannot be bound. */
export class HealthServerError extends Error {
  override name = "HealthServerError";
}

/**
 * Serves the hub's health until `signal` aborts.
 *
 * Guarantees: only GET and HEAD are answered; nothing here changes the hub's state. /healthz fails
 * (503) only when the process or a worker is wedged: an unreachable cluster is reported, not fatal,
 * because restarting the pod would not fix a remote cluster. /readyz is 200 once every selected
 * cluster the command line defines (and the hub's home cluster) completed its first full list: see Hub. Both bodies
 * are the probe view (names and states only, a bounded number of bytes: probe_view.ts), whoever asks; from 500
 * clusters on, one body serves the requests of up to a second (_health_memo.ts). The port is gated (gated_server.ts): a header timeout and a connection cap, so slow
 * clients cannot hold it, and bound to loopback it answers only loopback Host headers (421 otherwise).
 */
export function serveHealth(hub: Hub, options: HealthServerOptions, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  let server: ReturnType<typeof serveGated>;
  const probe = new HealthMemo(() => probeView(hub.health()), { size: (body) => body.summary.clusters });
  try {
    server = serveGated({
      ...options.limits,
      hostname: options.hostname,
      port: options.port,
      metrics: { registry: hub.metrics.registry, portName: "liveness" },
      onListen: (addr) => options.onListen?.(addr),
    }, (req) => handle(hub, options, probe, req));
  } catch (err) {
    throw new HealthServerError(
      `cannot serve health on ${options.hostname}:${options.port}: ${(err as Error).message}`,
      { cause: err },
    );
  }
  signal.addEventListener("abort", () => void server.shutdown(), { once: true });
  return server.finished;
}

async function handle(
  hub: Hub,
  options: HealthServerOptions,
  probe: HealthMemo<ProbeBody>,
  req: Request,
): Promise<Response> {
  if (req.method !== "GET" && req.method !== "HEAD") {
    return new Response("method not allowed\n", { status: 405, headers: { allow: "GET, HEAD" } });
  }
  const path = new URL(req.url).pathname;
  const full = options.statusAndMetrics ?? true;
  switch (path) {
    case "/healthz": {
      const body = probe.get();
      return json(body, body.status === "failing" ? 503 : 200);
    }
    case "/readyz": {
      const body = probe.get();
      return json(body, body.ready ? 200 : 503);
    }
    case "/status":
      if (full) return answerStatus(req, hub, options.history);
      break;
    case "/metrics":
      if (full) return await answerMetrics(hub);
      break;
  }
  return new Response(`not found: try ${full ? "/healthz, /readyz, /status or /metrics" : "/healthz or /readyz"}\n`, {
    status: 404,
  });
}

function json(body: unknown, status: number): Response {
  return new Response(JSON.stringify(body) + "\n", {
    status,
    headers: { "content-type": "application/json", "cache-control": "no-store" },
  });
}

// The health endpoint: /healthz, /readyz, /status and /metrics on the address --liveness names. Read-only.

import type { Logger } from "../util/mod.ts";
import type { Hub } from "./hub.ts";

export interface HealthServerOptions {
  hostname: string;
  port: number;
  logger: Logger;
  /** Called once the socket is bound, with the actual port (useful with port 0). */
  onListen?(addr: { hostname: string; port: number }): void;
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
 * cluster completed its first full list.
 */
export function serveHealth(hub: Hub, options: HealthServerOptions, signal: AbortSignal): Promise<void> {
  let server: Deno.HttpServer;
  try {
    server = Deno.serve({
      hostname: options.hostname,
      port: options.port,
      signal,
      onListen: (addr) => options.onListen?.(addr),
    }, (req) => handle(hub, req));
  } catch (err) {
    throw new HealthServerError(
      `cannot serve health on ${options.hostname}:${options.port}: ${(err as Error).message}`,
      { cause: err },
    );
  }
  return server.finished;
}

async function handle(hub: Hub, req: Request): Promise<Response> {
  if (req.method !== "GET" && req.method !== "HEAD") {
    return new Response("method not allowed\n", { status: 405, headers: { allow: "GET, HEAD" } });
  }
  const path = new URL(req.url).pathname;
  switch (path) {
    case "/healthz": {
      const h = hub.health();
      return json(h, h.status === "failing" ? 503 : 200);
    }
    case "/readyz": {
      const h = hub.health();
      return json(h, h.ready ? 200 : 503);
    }
    case "/status":
      return json(hub.health(), 200);
    case "/metrics":
      return new Response(await hub.metrics.registry.metrics(), {
        headers: { "content-type": hub.metrics.registry.contentType },
      });
    default:
      return new Response("not found: try /healthz, /readyz, /status or /metrics\n", { status: 404 });
  }
}

function json(body: unknown, status: number): Response {
  return new Response(JSON.stringify(body) + "\n", { status, headers: { "content-type": "application/json" } });
}

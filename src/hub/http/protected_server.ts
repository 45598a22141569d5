// The protected port (--metrics-bind-address): /metrics and /status over HTTPS, each request reviewed in the home cluster.

import { errorText, type Logger } from "../../util/mod.ts";
import type { ConnectionLimits } from "./connection_gate.ts";
import { type GatedServer, serveGated } from "./gated_server.ts";
import type { Hub } from "../hub.ts";
import type { ReconcileHistory } from "../health/reconcile_history.ts";
import type { AccessDecision, RequestAuthorizer } from "./request_auth.ts";
import { answerMetrics, answerStatus, prefersHtml, statusPage } from "../health/status_routes.ts";
import { type TlsPair, watchTlsFiles } from "./tls_material.ts";

export interface ProtectedServerOptions {
  hostname: string;
  port: number;
  /** HTTPS with this pair; plain HTTP when absent (`--metrics-secure=false`). */
  tls?: TlsPair;
  /** The files `tls` came from: re-read every `tlsPollMs`, and served as soon as they change. */
  tlsFiles?: { certFile: string; keyFile: string };
  /** Default 10 s. */
  tlsPollMs?: number;
  authorizer: RequestAuthorizer;
  history?: ReconcileHistory;
  logger: Logger;
  /** Called each time a socket is bound (again after a certificate rotation), with the actual port. */
  onListen?(addr: { hostname: string; port: number }): void;
  /** Header timeout, connection cap and lifetime of the port (defaults: connection_gate.ts). */
  limits?: ConnectionLimits;
}

/** Thrown when the protected port cannot be bound or its certificate is refused at start. */
export class ProtectedServerError extends Error {
  override name = "ProtectedServerError";
}

const PATHS = new Set(["/metrics", "/status"]);

/**
 * Serves /metrics and /status until `signal` aborts; settles once the socket is closed.
 *
 * Guarantees:
 * - every request is decided by `authorizer` before anything else: no token or a rejected one gets 401, a user
 *   without `get` on the path gets 403, each with a body that names nothing (a browser gets the status page,
 *   which holds no data, so it can ask for a token); 429 with Retry-After when that would take a review beyond the
 *   authorizer's limits; 503 when the home cluster cannot review;
 * - the port is gated (gated_server.ts): a header timeout (TLS handshake included) and a connection cap, and bound to
 *   loopback it answers 421 to a foreign Host header before any review; over HTTPS its public socket is a TCP front
 *   (tls_front.ts) that closes connections on their TCP sockets, so a client that never says hello holds no descriptor
 *   once closed at the cap or the header timeout;
 * - only GET and HEAD; nothing here changes the hub;
 * - on a certificate rotation the new pair is checked first (parsable, key matching the certificate); a refused
 *   pair is logged and the old one keeps serving. A good pair replaces the socket: the old one stops accepting
 *   (requests in flight finish) and the port is bound again with the new pair, typically within 20 ms; a
 *   connection attempted in that gap is refused, which Prometheus retries at the next scrape.
 *
 * Why not two sockets with SO_REUSEPORT: Deno allows `reusePort` with TLS only behind `--unstable-net`.
 */
export function serveProtected(hub: Hub, options: ProtectedServerOptions, signal: AbortSignal): Promise<void> {
  const handler = (req: Request) => handle(hub, options, req);
  // Bound here, synchronously, so a port in use or a refused certificate throws to the caller at start.
  const first = bind(hub, options, options.port, options.tls, handler);
  return run(hub, first, handler, options, signal);
}

async function run(
  hub: Hub,
  first: GatedServer,
  handler: (req: Request) => Promise<Response>,
  options: ProtectedServerOptions,
  signal: AbortSignal,
): Promise<void> {
  let current = first;
  const port = current.addr.port;
  const stop = () => void current.shutdown();
  signal.addEventListener("abort", stop, { once: true });
  const watching = options.tls && options.tlsFiles
    ? watchTlsFiles({
      ...options.tlsFiles,
      current: options.tls,
      intervalMs: options.tlsPollMs,
      onChange: async (pair) => {
        const refused = tlsRefusal(pair);
        if (refused) {
          options.logger.warn("rotated TLS certificate refused; still serving the previous one", { error: refused });
          return false;
        }
        const old = current;
        void old.shutdown();
        try {
          current = await rebind(hub, options, port, pair, handler, signal);
        } catch (err) {
          if (signal.aborted) return true;
          throw new ProtectedServerError(`lost port ${port} while rotating the TLS certificate: ${errorText(err)}`, {
            cause: err,
          });
        }
        if (signal.aborted) void current.shutdown();
        options.logger.info("TLS certificate rotated", { port });
        return true;
      },
      onError: (err) => options.logger.warn("cannot re-read the TLS files", { error: err.message }),
    }, signal)
    : Promise.resolve();
  const aborted = new Promise<void>((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener("abort", () => resolve(), { once: true });
  });
  try {
    // The watcher only ends early by failing; a rotation replaces `current`, so wait for the last one.
    await Promise.race([aborted, watching]);
    await watching;
    await current.finished;
  } catch (err) {
    void current.shutdown();
    throw err;
  } finally {
    signal.removeEventListener("abort", stop);
  }
}

/** Why the TLS stack refuses a pair (unparsable, or a key that does not match the certificate); undefined if none. */
function tlsRefusal(pair: TlsPair): string | undefined {
  try {
    Deno.listenTls({ hostname: "127.0.0.1", port: 0, cert: pair.cert, key: pair.key }).close();
    return undefined;
  } catch (err) {
    return errorText(err);
  }
}

/** Binds `port` again once the previous socket has let go of it (a few milliseconds). */
async function rebind(
  hub: Hub,
  options: ProtectedServerOptions,
  port: number,
  tls: TlsPair,
  handler: (req: Request) => Promise<Response>,
  signal: AbortSignal,
): Promise<GatedServer> {
  for (let attempt = 1;; attempt++) {
    try {
      return bind(hub, options, port, tls, handler);
    } catch (err) {
      if (attempt >= 100 || signal.aborted) throw err;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
}

function bind(
  hub: Hub,
  options: ProtectedServerOptions,
  port: number,
  tls: TlsPair | undefined,
  handler: (req: Request) => Promise<Response>,
): GatedServer {
  try {
    return serveGated({
      ...options.limits,
      hostname: options.hostname,
      port,
      ...(tls ? { tls: { cert: tls.cert, key: tls.key } } : {}),
      metrics: { registry: hub.metrics.registry, portName: "protected" },
      onListen: (addr) => options.onListen?.(addr),
      onError: (err) => {
        options.logger.warn("protected port request failed", { error: errorText(err) });
        return new Response("Internal Server Error\n", { status: 500 });
      },
    }, handler);
  } catch (err) {
    throw new ProtectedServerError(
      `cannot serve --metrics-bind-address ${options.hostname}:${port}${tls ? " over HTTPS" : ""}: ${errorText(err)}`,
      { cause: err },
    );
  }
}

const REFUSED: Record<Exclude<AccessDecision, "allowed">, [number, string]> = {
  unauthenticated: [401, "Unauthorized\n"],
  forbidden: [403, "Forbidden\n"],
  throttled: [429, "Too Many Requests: retry in a second\n"],
  unavailable: [503, "Service Unavailable\n"],
};

async function handle(hub: Hub, options: ProtectedServerOptions, req: Request): Promise<Response> {
  if (req.method !== "GET" && req.method !== "HEAD") {
    return new Response("method not allowed\n", { status: 405, headers: { allow: "GET, HEAD" } });
  }
  const path = new URL(req.url).pathname;
  const decision = await options.authorizer.decide(req.headers.get("authorization"), path);
  if (decision !== "allowed") {
    const [status, text] = REFUSED[decision];
    if ((status === 401 || status === 403) && path === "/status" && prefersHtml(req.headers.get("accept"))) {
      return statusPage(status);
    }
    return new Response(text, {
      status,
      headers: {
        "content-type": "text/plain",
        "cache-control": "no-store",
        ...(status === 429 ? { "retry-after": "1" } : {}),
      },
    });
  }
  if (!PATHS.has(path)) return new Response("not found: try /metrics or /status\n", { status: 404 });
  return path === "/metrics" ? await answerMetrics(hub) : answerStatus(req, hub, options.history);
}

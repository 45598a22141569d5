// Deno.serve behind a ConnectionGate (behind a TCP front when it speaks TLS): how the hub's ports are served.

import * as prom from "../../util/prometheus.ts";
import { ConnectionGate, type ConnectionGateOptions, type ConnectionGateStats } from "./connection_gate.ts";
import { isLoopbackBind, refuseForeignHost } from "./host_guard.ts";
import { TlsFront } from "./tls_front.ts";

/** How a gated port listens and what it protects against; see ConnectionGateOptions for the limits. */
export interface GatedServerOptions extends ConnectionGateOptions {
  /** How long `shutdown()` lets handed-on requests finish before closing them. Default 2 s. */
  shutdownGraceMs?: number;
  /** Where `hub_http_connections_shed_total{port, reason}` is counted, under the label `portName`. */
  metrics?: { registry: prom.MetricRegistry; portName: string };
  /** Called once the public socket is bound, with its actual port. */
  onListen?(addr: { hostname: string; port: number }): void;
  /** Answers a handler that threw. */
  onError?(err: unknown): Response | Promise<Response>;
  /**
   * Answer 421 to a Host header that is not a loopback name (DNS rebinding). Default: when `hostname` is a loopback
   * address. A server behind another public socket (the admission port's TLS front) follows that socket's address.
   */
  hostGuard?: boolean;
}

/** The part of Deno.HttpServer the hub's ports use, for a server behind a gate. */
export interface GatedServer {
  readonly addr: Deno.NetAddr;
  /** The loopback address Deno.serve listens on behind the gate; it answers only the gate's own connections. */
  readonly innerAddr: Deno.NetAddr;
  /** Settles once the public socket and the server behind it are closed. */
  readonly finished: Promise<void>;
  readonly stats: Readonly<ConnectionGateStats>;
  /** Stops accepting; requests in flight get the grace period to finish, then their connections are closed. */
  shutdown(): Promise<void>;
  /**
   * Stops accepting and lets each open connection end on its own, none cut (ConnectionGate.retire); settles once all
   * have, within the connection lifetime. `shutdown()` later ends the rest within the grace period.
   */
  retire(): Promise<void>;
}

/**
 * Serves `handler` on `options.hostname:port` through a ConnectionGate, with Deno.serve parsing HTTP behind it on a
 * loopback port of its own. With `tls` (and no `slots` of the caller's), the public socket is a TLS front
 * (tls_front.ts): plain TCP, keeping the connection cap, piped to the gate, which does TLS on a loopback port.
 *
 * Guarantees:
 * - the public socket is bound before this returns (a port in use or a refused certificate throws at once);
 * - every request reached the handler through the gate: its head complete within the header timeout, within the
 *   connection cap; one request per connection, or with `keepAlive` several within its limits (connection_gate.ts); a request to the inner port from anywhere else is answered 403 and
 *   never reaches `handler`;
 * - on a port bound to loopback (127.0.0.0/8, ::1, localhost) a request whose Host header is not a loopback name or
 *   address gets 421 before `handler` runs (DNS rebinding); ports bound to any other address take any Host, since
 *   they are reached through Service names;
 * - with `tls`, a connection closed to make room or at the header timeout (a client that never says hello included)
 *   is closed on its TCP socket, so its file descriptors are free at once: in Deno 2.9.6 a TLS connection closed
 *   before its handshake keeps its socket until the client writes or leaves. A plain gate closes TCP sockets itself.
 */
export function serveGated(
  options: GatedServerOptions,
  handler: (req: Request) => Response | Promise<Response>,
): GatedServer {
  /** The gate's connections to the inner port, by local port: how many of their requests were answered. */
  const fromGate = new Map<number, { answered: number }>();
  const guardHost = options.hostGuard ?? isLoopbackBind(options.hostname);
  const inner = Deno.serve({
    hostname: "127.0.0.1",
    port: 0,
    onListen: () => {},
    onError: options.onError,
  }, async (req, info) => {
    const from = fromGate.get(info.remoteAddr.port);
    if (!from) return new Response("forbidden: connect to the hub's public port\n", { status: 403 });
    try {
      return (guardHost ? refuseForeignHost(req) : undefined) ?? await handler(req);
    } finally {
      from.answered++;
    }
  });
  const shed = options.metrics ? shedCounter(options.metrics.registry) : undefined;
  const port = options.metrics?.portName ?? "";
  /** Connections the front closed for the cap (it keeps the cap, so the gate behind it never does). */
  const frontShed = { evicted: 0, refused: 0 };
  let gate: ConnectionGate;
  let front: TlsFront | undefined;
  if (options.tls && !options.slots) {
    try {
      front = new TlsFront({
        hostname: options.hostname,
        port: options.port,
        maxConnections: options.maxConnections,
        lifetimeMs: options.lifetimeMs,
        onShed: (reason) => {
          frontShed[reason]++;
          shed?.inc({ port, reason });
        },
      }, () => gate.addr.port);
    } catch (err) {
      void inner.shutdown();
      throw err;
    }
  }
  const behind = front ? { hostname: "127.0.0.1", port: 0, slots: front.behind() } : {};
  try {
    gate = new ConnectionGate({ ...options, ...behind, onShed: (reason) => shed?.inc({ port, reason }) }, async () => {
      const conn = await Deno.connect({ hostname: "127.0.0.1", port: inner.addr.port });
      conn.setNoDelay(true);
      const port = (conn.localAddr as Deno.NetAddr).port;
      const counts = { answered: 0 };
      fromGate.set(port, counts);
      return { conn, release: () => fromGate.delete(port), answered: () => counts.answered };
    });
  } catch (err) {
    front?.abort();
    void inner.shutdown();
    throw err;
  }
  const addr = front?.addr ?? gate.addr;
  options.onListen?.({ hostname: addr.hostname, port: addr.port });
  const finished = Promise.all([gate.finished, front?.finished]).then(() => inner.shutdown()).then(() =>
    inner.finished
  );
  return {
    addr,
    innerAddr: inner.addr,
    finished,
    get stats() {
      const stats = gate.stats;
      return { ...stats, evicted: stats.evicted + frontShed.evicted, refused: stats.refused + frontShed.refused };
    },
    shutdown() {
      front?.close();
      gate.close();
      const grace = setTimeout(() => {
        gate.abort();
        front?.abort();
      }, options.shutdownGraceMs ?? 2_000);
      return finished.finally(() => clearTimeout(grace));
    },
    retire() {
      front?.close();
      gate.retire();
      return finished;
    },
  };
}

const SHED = "hub_http_connections_shed_total";

/** The shed counter of `registry`, made once per registry (both ports, and each rebinding, share it). */
function shedCounter(registry: prom.MetricRegistry): prom.Counter<"port" | "reason"> {
  const existing = registry.getSingleMetric(SHED) as prom.Counter<"port" | "reason"> | undefined;
  return existing ?? new prom.Counter({
    name: SHED,
    help: "Connections a hub port closed before answering them: refused or evicted at the connection cap, " +
      "timedOut before their request head arrived, oversized heads",
    labelNames: ["port", "reason"],
    registers: [registry],
  });
}

// Admission for the hub's HTTP ports: a connection cap and a header-read deadline in front of Deno.serve.

import { acceptCapped } from "./accept_each.ts";
import { ConnectionSlots, type SlotTable } from "./connection_slots.ts";
import { KeepAlive, passRest } from "./_keep_alive.ts";
import { ClientInput, type KeepAliveLimits, oneRequestOnly } from "./request_framing.ts";
import { closeQuietly, copy, writeAll } from "./socket_copy.ts";

export { endsHead, oneRequestOnly } from "./request_framing.ts";
export { closeQuietly } from "./socket_copy.ts";
export type { KeepAliveLimits };

/** How long and how many: the limits of a gated port. */
export interface ConnectionLimits {
  /** A connection (TLS handshake included) must deliver its whole request head within this. Default 10 s. */
  headerTimeoutMs?: number;
  /** Connections open at once, waiting or handed on. Default 256. */
  maxConnections?: number;
  /** A handed-on connection is closed this long after it was accepted, whatever it is doing. Default 60 s. */
  lifetimeMs?: number;
  /** A request head larger than this is answered 431 and closed. Default 16 KiB. */
  maxHeaderBytes?: number;
}

/** Where a gate listens, and its limits. */
export interface ConnectionGateOptions extends ConnectionLimits {
  hostname: string;
  port: number;
  /**
   * Terminate TLS with this pair; plain TCP when absent. A TLS gate cannot free the socket of a client that never
   * says hello by closing it (Deno 2.9.6): it sits behind a TLS front that keeps `slots` (tls_front.ts).
   */
  tls?: { cert: string; key: string };
  /** Called each time the gate closes a connection on its own, with the reason (e.g. to count it in /metrics). */
  onShed?(reason: ShedReason): void;
  /** Serve several requests per connection within these limits; absent: one request per connection. */
  keepAlive?: KeepAliveLimits;
  /**
   * Where the cap is kept and what each connection is doing is told: by default a ConnectionSlots of maxConnections;
   * a TCP front before the gate passes its own (tls_front.ts), and makes room there.
   */
  slots?: SlotTable<Deno.Conn>;
}

/** Why the gate closed a connection before the server behind answered it. */
export type ShedReason = "refused" | "evicted" | "timedOut" | "oversized";

/** What the gate has done since it started; for tests and /metrics. */
export interface ConnectionGateStats {
  accepted: number;
  /** Closed at once: the cap was reached and every open connection was being answered. */
  refused: number;
  /** Closed while idle (or, none idle, while sending a body) to make room for a newer one at the cap. */
  evicted: number;
  /** Closed because its head did not arrive within the header timeout. */
  timedOut: number;
  /** Closed because the head exceeded maxHeaderBytes. */
  oversized: number;
  /** Handed on to the server behind the gate. */
  handedOn: number;
  /** Kept-alive connections closed after `idleTimeoutMs` without a next request (or at `close()`), all answered. */
  idleClosed: number;
}

/** Thrown when the gate cannot bind its address. */
export class ConnectionGateError extends Error {
  override name = "ConnectionGateError";
}

/**
 * Opens the connection behind the gate for one accepted client, once its request head has arrived; `release` is
 * called once that connection is closed.
 */
export type Upstream = () => Promise<UpstreamConnection>;

/** The connection behind the gate for one client. */
export interface UpstreamConnection {
  conn: Deno.Conn;
  release(): void;
  /**
   * With keep-alive: how many of this connection's requests the server has answered, so the gate closes an idle
   * connection only between requests. Without it, bytes coming back after a request count as its answer.
   */
  answered?(): number;
}

const TOO_LARGE_BODY = "request head too large: send a shorter request line and fewer or shorter headers\n";
const TOO_LARGE = new TextEncoder().encode(
  "HTTP/1.1 431 Request Header Fields Too Large\r\ncontent-type: text/plain\r\nconnection: close\r\n" +
    `content-length: ${TOO_LARGE_BODY.length}\r\n\r\n${TOO_LARGE_BODY}`,
);

/**
 * Accepts connections on one address and hands each to `upstream` only once its whole request head (request line and
 * headers, up to the empty line) has arrived, then copies bytes both ways until either side ends.
 *
 * Guarantees:
 * - at most `maxConnections` client connections are open at once; when a new one arrives at the cap, the one idle the
 *   longest is closed to make room (connection_slots.ts): idle is still sending its first head (TLS handshake
 *   included) or, with keep-alive, answered and waiting for (or receiving) its next head; none idle, the one whose
 *   body has been arriving the longest (keep-alive only: without it a request handed on is never closed for room);
 *   when every open connection is being answered, the new one is closed at once;
 * - a connection whose head (TLS handshake included) has not arrived within `headerTimeoutMs` of its accept is
 *   closed, as is any connection `lifetimeMs` after its accept, so a client that trickles bytes holds nothing for
 *   long;
 * - `close()` stops accepting at once, closes connections still sending their heads, and lets handed-on ones finish
 *   (each within its lifetime); `abort()` closes them too; `retire()` stops accepting a second later and cuts nothing
 *   (each connection ends on its own: its next request is its last, an idle one closes at its idle timeout);
 *   `finished` settles once every connection is closed.
 * - without `keepAlive`, one request per connection: the head handed on says `connection: close` (added after the
 *   request line, which wins over any keep-alive the client asked for), so the server behind closes after its answer
 *   and every request is subject to the header deadline;
 * - with `keepAlive`, a connection serves up to `maxRequests` requests, each head whole within `headerTimeoutMs` of
 *   its first byte (the first one's of the accept); the gate finds where each request ends from its head
 *   (`content-length`) and hands on the last one with `connection: close`: the `maxRequests`-th, one that starts at a
 *   third of `lifetimeMs` or later (so it has two thirds of the lifetime to be answered), one after `close()`, and one
 *   whose end the head does not tell (chunked, upgrade, HTTP/1.0; request_framing.ts). A connection whose requests
 *   are all answered is closed after `idleTimeoutMs` without a next one, and at `close()`; one still being answered
 *   is closed once answered. Kept-alive connections count against `maxConnections`. An answer that comes back while
 *   its request's body is still arriving (a refusal) ends that body there and the connection once the answer is out
 *   (Deno.serve would keep a connection whose body its handler stopped reading).
 * Assumptions: HTTP/1.x only (no ALPN offered); the server behind honours a request's `connection: close`, as
 *   Deno.serve does; with keep-alive, it keeps its connection to the gate open between requests and writes each answer
 *   at once (small bodies), so `answered()` and the bytes seen coming back mean the answer is with the client.
 */
export class ConnectionGate {
  readonly addr: Deno.NetAddr;
  readonly finished: Promise<void>;
  readonly #listener: Deno.Listener;
  readonly #upstream: Upstream;
  readonly #onShed: (reason: ShedReason) => void;
  readonly #headerTimeoutMs: number;
  readonly #slots: SlotTable<Deno.Conn>;
  readonly #lifetimeMs: number;
  readonly #maxHeaderBytes: number;
  /** Open client connections still sending their heads, oldest first. */
  readonly #waiting = new Set<Deno.Conn>();
  readonly #handedOn = new Set<Deno.Conn>();
  readonly #stats: ConnectionGateStats = {
    accepted: 0,
    refused: 0,
    evicted: 0,
    timedOut: 0,
    oversized: 0,
    handedOn: 0,
    idleClosed: 0,
  };
  /** Serves kept-alive connections (with `keepAlive`: _keep_alive.ts). */
  readonly #keepAlive: KeepAlive | undefined;
  /** Kept-alive connections waiting for their next request: each checks, when called, whether to close now. */
  readonly #idleWaiters = new Set<() => void>();
  #closed = false;
  /** `retire()` was called: no new connection, each open one ends on its own (its next request is its last). */
  #retiring = false;
  #listening = true;
  #stopListening: ReturnType<typeof setTimeout> | undefined;

  /** Binds now (throwing ConnectionGateError naming the address) and starts accepting. */
  constructor(options: ConnectionGateOptions, upstream: Upstream) {
    this.#headerTimeoutMs = positive(options.headerTimeoutMs ?? 10_000, "headerTimeoutMs");
    this.#slots = options.slots ?? new ConnectionSlots(positive(options.maxConnections ?? 256, "maxConnections"));
    this.#lifetimeMs = positive(options.lifetimeMs ?? 60_000, "lifetimeMs");
    this.#maxHeaderBytes = positive(options.maxHeaderBytes ?? 16 * 1024, "maxHeaderBytes");
    this.#keepAlive = options.keepAlive && new KeepAlive({
      limits: {
        maxRequests: positive(options.keepAlive.maxRequests ?? 100, "keepAlive.maxRequests"),
        idleTimeoutMs: positive(options.keepAlive.idleTimeoutMs ?? 15_000, "keepAlive.idleTimeoutMs"),
      },
      slots: this.#slots,
      headerTimeoutMs: this.#headerTimeoutMs,
      maxHeaderBytes: this.#maxHeaderBytes,
      lifetimeMs: this.#lifetimeMs,
      ending: () => this.#closed || this.#retiring,
      closed: () => this.#closed,
      idleWaiters: this.#idleWaiters,
      shed: (reason) => this.#shed(reason),
      idleClosed: () => this.#stats.idleClosed++,
    });
    this.#upstream = upstream;
    this.#onShed = options.onShed ?? (() => {});
    const { hostname, port, tls } = options;
    try {
      this.#listener = tls
        ? Deno.listenTls({ hostname, port, cert: tls.cert, key: tls.key, transport: "tcp" })
        : Deno.listen({ hostname, port, transport: "tcp" });
    } catch (err) {
      throw new ConnectionGateError(`cannot listen on ${hostname}:${port}: ${(err as Error).message}`, { cause: err });
    }
    this.addr = this.#listener.addr as Deno.NetAddr;
    this.finished = this.#acceptLoop();
  }

  get stats(): Readonly<ConnectionGateStats> {
    return { ...this.#stats };
  }

  /** Client connections open now (waiting for their heads or handed on). */
  get open(): number {
    return this.#waiting.size + this.#handedOn.size;
  }

  /** Stops accepting and closes connections still sending their heads; handed-on ones finish. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#closeListener();
    for (const conn of this.#waiting) closeQuietly(conn);
    for (const check of [...this.#idleWaiters]) check();
  }

  /**
   * Stops accepting and lets every open connection end on its own, none cut: a head still arriving is read within its
   * deadline, the next request of a kept-alive connection is its last (answered with `connection: close`), and an idle
   * one closes at its idle timeout as it would have. A client that sends a request on an idle connection the moment
   * the server closes it sees EOF, and Go does not resend a POST: closing idle connections at once (as `close()` does)
   * makes that race happen at every retirement instead of only at the idle timeout. `close()` or `abort()` later still
   * ends the rest sooner.
   */
  retire(): void {
    if (this.#retiring || this.#closed) return;
    this.#retiring = true;
    // A connection the front opened just before it stopped sending here may still wait in the listen backlog:
    // closing the listener now would reset it, so it stops a second later (those accepted meanwhile get one request).
    this.#stopListening = setTimeout(() => this.#closeListener(), 1_000);
    for (const check of [...this.#idleWaiters]) check();
  }

  #closeListener(): void {
    clearTimeout(this.#stopListening);
    this.#listening = false;
    closeQuietly(this.#listener);
  }

  /** Closes every connection now, handed on or not (the end of a grace period after `close()`). */
  abort(): void {
    this.close();
    for (const conn of this.#handedOn) closeQuietly(conn);
  }

  #acceptLoop(): Promise<void> {
    return acceptCapped(this.#listener, () => this.#closed || !this.#listening, {
      slots: this.#slots,
      admit: (conn) => {
        this.#stats.accepted++;
        return { serve: () => this.#serve(conn) };
      },
      shed: (reason) => this.#shed(reason),
      end: () => this.#retiring || this.close(),
    });
  }

  #shed(reason: ShedReason): void {
    this.#stats[reason]++;
    this.#onShed(reason);
  }

  async #serve(conn: Deno.Conn): Promise<void> {
    this.#waiting.add(conn);
    const acceptedAt = Date.now();
    const state = { timedOut: false };
    const headTimer = setTimeout(() => {
      state.timedOut = true;
      closeQuietly(conn);
    }, this.#headerTimeoutMs);
    const lifeTimer = setTimeout(() => closeQuietly(conn), this.#lifetimeMs);
    const input = new ClientInput(conn);
    let upstream: UpstreamConnection | undefined;
    try {
      const head = await input.head(this.#maxHeaderBytes);
      clearTimeout(headTimer);
      if (head === "oversized") {
        this.#shed("oversized");
        await conn.write(TOO_LARGE).catch(() => {});
        return;
      }
      if (!head || !this.#waiting.delete(conn) || !this.#slots.has(conn)) return;
      this.#handedOn.add(conn);
      this.#stats.handedOn++;
      upstream = await this.#upstream();
      const inner = upstream.conn;
      if (!this.#keepAlive) {
        this.#slots.mark(conn, "busy");
        await writeAll(inner, oneRequestOnly(head));
        await passRest(input, conn, inner);
        await copy(inner, conn);
        return;
      }
      await this.#keepAlive.serve(conn, input, head, upstream, acceptedAt, state);
    } catch {
      // A client or the server behind went away: nothing to report beyond closing both ends.
    } finally {
      clearTimeout(headTimer);
      clearTimeout(lifeTimer);
      if (state.timedOut) this.#shed("timedOut");
      this.#waiting.delete(conn);
      this.#handedOn.delete(conn);
      this.#slots.close(conn);
      closeQuietly(conn);
      if (upstream) {
        closeQuietly(upstream.conn);
        upstream.release();
      }
    }
  }
}

function positive(value: number, what: string): number {
  if (!Number.isFinite(value) || value <= 0) {
    throw new RangeError(`cannot start a connection gate: ${what} must be a positive number, got ${value}`);
  }
  return value;
}

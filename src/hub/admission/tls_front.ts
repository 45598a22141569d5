// The admission port's public socket: plain TCP piped to the current TLS server behind it, so a new certificate is
// taken without ever closing the port (no refused connection while it rotates).

import { acceptEach } from "../http/accept_each.ts";
import { closeQuietly, copy } from "../http/socket_copy.ts";

/** Where the front listens, and its limits. */
export interface TlsFrontOptions {
  hostname: string;
  port: number;
  /**
   * Connections open at once; more are closed at accept. Default 512: twice the gate's cap, a bound on file
   * descriptors only; room is made for new connections behind the front, by the gate (see the class).
   */
  maxConnections?: number;
  /** Each connection is closed this long after its accept, whatever it is doing. Default 60 s (the gate's). */
  lifetimeMs?: number;
}

/** Thrown when the front cannot bind its address. */
export class TlsFrontError extends Error {
  override name = "TlsFrontError";
}

/**
 * Accepts TCP connections and pipes each, bytes unchanged, to the loopback port `upstream()` names at its accept: the
 * gated TLS server (gated_server.ts) in use then. That server does all the work (TLS, the header deadline, keep-alive
 * within its limits, making room at its cap by closing the connection idle the longest); the front adds no parsing,
 * only its lifetime and a cap on file descriptors. When the gate closes a connection to make room, the front closes
 * the client's at once, so the front holds at most the gate's cap plus the connections in transit between the two.
 *
 * Guarantees:
 * - the public socket stays bound from construction to `close()`; swapping the server behind (a certificate rotation)
 *   changes only where new connections go, and connections already piped finish on the old server;
 * - at most `maxConnections` connections are open at once (newer ones are closed at accept: the gate behind cannot keep
 *   up), none longer than `lifetimeMs`; when the server behind closes, the client's connection is closed too, and the other way round;
 * - `finished` settles once the socket and every piped connection are closed.
 *
 * Why: Deno.listenTls cannot change its certificate, and binding the port again (as the protected port does) leaves a
 * gap of a few milliseconds in which an apiserver's call is refused, which `failurePolicy: Fail` turns into a refused
 * write. Node's `setSecureContext` and `reusePort` with TLS are not available without unstable flags.
 */
export class TlsFront {
  readonly addr: Deno.NetAddr;
  readonly finished: Promise<void>;
  readonly #listener: Deno.Listener;
  readonly #upstream: () => number;
  readonly #max: number;
  readonly #lifetimeMs: number;
  readonly #open = new Set<Deno.Conn>();
  /** Closes each piped connection, by `server port:local port` of its connection to the server behind. */
  readonly #byInner = new Map<string, () => void>();
  #closed = false;
  /** Connections closed at accept for the cap. */
  refused = 0;

  constructor(options: TlsFrontOptions, upstream: () => number) {
    this.#upstream = upstream;
    this.#max = options.maxConnections ?? 512;
    this.#lifetimeMs = options.lifetimeMs ?? 60_000;
    try {
      this.#listener = Deno.listen({ hostname: options.hostname, port: options.port, transport: "tcp" });
    } catch (err) {
      throw new TlsFrontError(`cannot listen on ${options.hostname}:${options.port}: ${(err as Error).message}`, {
        cause: err,
      });
    }
    this.addr = this.#listener.addr as Deno.NetAddr;
    this.finished = this.#accept();
  }

  /** Connections open now. */
  get open(): number {
    return this.#open.size;
  }

  /** Stops accepting; piped connections finish within their lifetime (`abort` closes them now). */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    try {
      this.#listener.close();
    } catch { /* already closed */ }
  }

  /**
   * The server behind closed `accepted` (evicted, timed out, done): ends the input of the connection it was (a
   * half-close), and the client's connection closes once what the server sent is passed on. Needed because in Deno
   * 2.9.6 a TLS connection closed before its handshake keeps its socket until the peer closes or writes, so the close
   * would otherwise never reach the client, and both sockets would stay open.
   */
  closePeer(accepted: Deno.Conn): void {
    const server = (accepted.localAddr as Deno.NetAddr).port;
    const client = (accepted.remoteAddr as Deno.NetAddr).port;
    this.#byInner.get(`${server}:${client}`)?.();
  }

  /** Closes the socket and every connection now. */
  abort(): void {
    this.close();
    for (const c of this.#open) closeQuietly(c);
  }

  #accept(): Promise<void> {
    return acceptEach(this.#listener, () => this.#closed, (conn) => {
      if (this.#open.size < this.#max) return this.#pipe(conn);
      this.refused++;
      closeQuietly(conn);
    }, () => this.close());
  }

  async #pipe(conn: Deno.Conn): Promise<void> {
    this.#open.add(conn);
    let inner: Deno.Conn | undefined;
    let key: string | undefined;
    const life = setTimeout(() => {
      closeQuietly(conn);
      if (inner) closeQuietly(inner);
    }, this.#lifetimeMs);
    try {
      const tcp = await Deno.connect({ hostname: "127.0.0.1", port: this.#upstream() });
      tcp.setNoDelay(true);
      inner = tcp;
      const back = inner;
      key = `${(back.remoteAddr as Deno.NetAddr).port}:${(back.localAddr as Deno.NetAddr).port}`;
      let ended = false;
      // The server behind is done with this connection: its input ends, which frees a socket it holds (closePeer);
      // what it sent is still passed on, then its end ends the exchange.
      this.#byInner.set(key, () => {
        ended = true;
        back.closeWrite().catch(() => {});
      });
      // The client's end of input is passed on (the answer may still come); the server's end ends the exchange.
      void copy(conn, back).then((eof) => eof ? back.closeWrite().catch(() => {}) : ended || closeQuietly(back));
      await copy(back, conn);
    } catch {
      // Either side went away: close both.
    } finally {
      clearTimeout(life);
      if (key !== undefined) this.#byInner.delete(key);
      this.#open.delete(conn);
      closeQuietly(conn);
      if (inner) closeQuietly(inner);
    }
  }
}

// The public socket of a TLS port (admission, protected): plain TCP piped to the TLS server behind it, keeping the
// port's connection cap on the TCP sockets, so making room or giving up on a silent client frees its descriptor.

import { acceptCapped } from "./accept_each.ts";
import { ConnectionSlots, type SlotTable } from "./connection_slots.ts";
import { closeQuietly, copy } from "./socket_copy.ts";

/** Where the front listens, and its limits. */
export interface TlsFrontOptions {
  hostname: string;
  port: number;
  /** Connections open at once; at the cap room is made (see the class). Default 256. */
  maxConnections?: number;
  /** Each connection is closed this long after its accept, whatever it is doing. Default 60 s (the gate's). */
  lifetimeMs?: number;
  /** Called for each connection closed to make room (`evicted`) or at once at the cap (`refused`). */
  onShed?(reason: "evicted" | "refused"): void;
}

/** Thrown when the front cannot bind its address. */
export class TlsFrontError extends Error {
  override name = "TlsFrontError";
}

/** One client connection and its connection to the server behind. */
interface Pipe {
  conn: Deno.Conn;
  inner?: Deno.Conn;
  /** The server behind is done with it: its input ends (the client's connection closes once its output is out). */
  ended?: boolean;
}

/**
 * Accepts TCP connections and pipes each, bytes unchanged, to the loopback port `upstream()` names at its accept: the
 * gated TLS server (gated_server.ts) in use then, which does TLS, the header deadline and keep-alive, and reports what
 * each connection is doing to `behind` (idle, body, busy). The front keeps the cap on those reports.
 *
 * Guarantees:
 * - the public socket stays bound from construction to `close()`; swapping the server behind (a certificate rotation)
 *   changes only where new connections go, and connections already piped finish on the old server;
 * - at most `maxConnections` connections are open at once; at the cap the one idle the longest (its TLS handshake, a
 *   head still arriving, or kept alive between requests; a connection not yet reported is idle) is closed to make
 *   room, then the one whose body has been arriving the longest; only when every connection's request is being
 *   answered is the newcomer closed at once (connection_slots.ts). Closing happens here, on the TCP sockets, so it
 *   is immediate and frees the file descriptors at once;
 * - no connection lives longer than `lifetimeMs`; when the server behind closes, the client's connection is closed
 *   too, and the other way round; `finished` settles once the socket and every piped connection are closed.
 *
 * Why here: in Deno 2.9.6 a TLS connection closed before its handshake keeps its socket, and its file descriptor,
 * until its peer closes or writes, so a TLS server cannot make room, or give up on a client that never says hello, by
 * closing its own end: the front closes the TCP sockets. And Deno.listenTls cannot change its certificate: binding
 * the port again leaves a gap of a few milliseconds in which a connection is refused, which for the admission port's
 * apiservers `failurePolicy: Fail` turns into a refused write; with a front, swapping the server behind leaves none.
 */
export class TlsFront {
  readonly addr: Deno.NetAddr;
  readonly finished: Promise<void>;
  readonly #listener: Deno.Listener;
  readonly #upstream: () => number;
  readonly #slots: ConnectionSlots<Deno.Conn>;
  readonly #lifetimeMs: number;
  readonly #onShed: (reason: "evicted" | "refused") => void;
  readonly #open = new Set<Deno.Conn>();
  /** Each pipe by `server port:local port` of its connection to the server behind (what the server sees). */
  readonly #byInner = new Map<string, Pipe>();
  #closed = false;
  /** Connections closed at accept for the cap. */
  refused = 0;

  constructor(options: TlsFrontOptions, upstream: () => number) {
    this.#upstream = upstream;
    this.#slots = new ConnectionSlots(options.maxConnections ?? 256);
    this.#lifetimeMs = options.lifetimeMs ?? 60_000;
    this.#onShed = options.onShed ?? (() => {});
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

  /**
   * The slot table for the server behind (the gate's `slots` option), keyed by the connections it accepted from this
   * front: it never refuses (the front admitted them), its marks move the front's slots, and its `close` ends the
   * input of the connection behind, so a socket the server holds is freed and the client's connection closes once
   * what the server sent has passed.
   */
  behind(): SlotTable<Deno.Conn> {
    const pipeOf = (accepted: Deno.Conn) => {
      const server = (accepted.localAddr as Deno.NetAddr).port;
      return this.#byInner.get(`${server}:${(accepted.remoteAddr as Deno.NetAddr).port}`);
    };
    return {
      open: () => true,
      has: (accepted) => {
        const pipe = pipeOf(accepted);
        return pipe === undefined || this.#slots.has(pipe.conn);
      },
      mark: (accepted, state) => {
        const pipe = pipeOf(accepted);
        if (pipe) this.#slots.mark(pipe.conn, state);
      },
      close: (accepted) => {
        const pipe = pipeOf(accepted);
        if (!pipe?.inner || pipe.ended) return;
        pipe.ended = true;
        pipe.inner.closeWrite().catch(() => {});
      },
    };
  }

  /** Stops accepting; piped connections finish within their lifetime (`abort` closes them now). */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    closeQuietly(this.#listener);
  }

  /** Closes the socket and every connection now. */
  abort(): void {
    this.close();
    for (const c of this.#open) closeQuietly(c);
  }

  #accept(): Promise<void> {
    return acceptCapped(this.#listener, () => this.#closed, {
      slots: this.#slots,
      admit: (conn) => {
        const pipe: Pipe = { conn };
        return {
          serve: () => this.#pipe(pipe),
          evicted: () => {
            if (pipe.inner) closeQuietly(pipe.inner);
          },
        };
      },
      shed: (reason) => {
        if (reason === "refused") this.refused++;
        this.#onShed(reason);
      },
      end: () => this.close(),
    });
  }

  async #pipe(pipe: Pipe): Promise<void> {
    const { conn } = pipe;
    this.#open.add(conn);
    let key: string | undefined;
    const life = setTimeout(() => {
      closeQuietly(conn);
      if (pipe.inner) closeQuietly(pipe.inner);
    }, this.#lifetimeMs);
    try {
      const back = await Deno.connect({ hostname: "127.0.0.1", port: this.#upstream() });
      pipe.inner = back;
      if (!this.#slots.has(conn)) return; // evicted while connecting
      back.setNoDelay(true);
      key = `${(back.remoteAddr as Deno.NetAddr).port}:${(back.localAddr as Deno.NetAddr).port}`;
      this.#byInner.set(key, pipe);
      // The client's end of input is passed on (the answer may still come); the server's end ends the exchange.
      void copy(conn, back).then((eof) => eof ? back.closeWrite().catch(() => {}) : pipe.ended || closeQuietly(back));
      await copy(back, conn);
    } catch {
      // Either side went away: close both.
    } finally {
      clearTimeout(life);
      if (key !== undefined) this.#byInner.delete(key);
      this.#slots.close(conn);
      this.#open.delete(conn);
      closeQuietly(conn);
      if (pipe.inner) closeQuietly(pipe.inner);
    }
  }
}

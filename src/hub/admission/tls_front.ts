// The admission port's public socket: plain TCP piped to the current TLS server behind it, so a new certificate is
// taken without ever closing the port (no refused connection while it rotates).

import { acceptEach } from "../http/accept_each.ts";
import { closeQuietly } from "../http/connection_gate.ts";

/** Where the front listens, and its limits. */
export interface TlsFrontOptions {
  hostname: string;
  port: number;
  /** Connections open at once; more are closed at accept. Default 256 (the gate's cap). */
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
 * within its limits); the front adds no parsing, only its cap and lifetime.
 *
 * Guarantees:
 * - the public socket stays bound from construction to `close()`; swapping the server behind (a certificate rotation)
 *   changes only where new connections go, and connections already piped finish on the old server;
 * - at most `maxConnections` connections are open at once (newer ones are closed at accept), none longer than
 *   `lifetimeMs`; when the server behind closes, the client's connection is closed too, and the other way round;
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
  #closed = false;
  /** Connections closed at accept for the cap. */
  refused = 0;

  constructor(options: TlsFrontOptions, upstream: () => number) {
    this.#upstream = upstream;
    this.#max = options.maxConnections ?? 256;
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
    const life = setTimeout(() => {
      closeQuietly(conn);
      if (inner) closeQuietly(inner);
    }, this.#lifetimeMs);
    try {
      const tcp = await Deno.connect({ hostname: "127.0.0.1", port: this.#upstream() });
      tcp.setNoDelay(true);
      inner = tcp;
      const back = inner;
      // The client's end of input is passed on (the answer may still come); the server's end ends the exchange.
      void copy(conn, back).then((eof) => eof ? back.closeWrite().catch(() => {}) : closeQuietly(back));
      await copy(back, conn);
    } catch {
      // Either side went away: close both.
    } finally {
      clearTimeout(life);
      this.#open.delete(conn);
      closeQuietly(conn);
      if (inner) closeQuietly(inner);
    }
  }
}

/** Copies until `from` ends (true) or either side fails (false); never rejects. */
async function copy(from: Deno.Conn, to: Deno.Conn): Promise<boolean> {
  const buf = new Uint8Array(16 * 1024);
  try {
    for (;;) {
      const n = await from.read(buf);
      if (n === null) return true;
      for (let off = 0; off < n;) off += await to.write(buf.subarray(off, n));
    }
  } catch {
    return false;
  }
}

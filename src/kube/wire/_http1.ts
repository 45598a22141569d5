// HTTP/1.1 keep-alive connections on Deno's own TCP/TLS sockets: the KubeClient's default transport.
//
// Why not fetch: a status write through Deno's fetch cost the hub ~160 µs of CPU here, through these
// sockets ~95 µs (`deno run -A bench/tools/transport_probe.ts`), and a watch event skips the web-streams
// machinery. The subset of HTTP/1.1 an API server speaks is small: Content-Length or chunked bodies,
// keep-alive, no 1xx, no compression unless asked for (we never ask).
//
// Guarantees:
// - A connection carries one request at a time and goes back to the idle pool only after its whole
//   response was read; anything unexpected (a parse error, an abort, a short body) destroys it.
// - An abort closes the socket, which rejects the pending read or write at once, in any phase
//   (TCP connect, TLS handshake, headers, body).
// - A request that finds a reused idle connection already closed by the server (no byte of a
//   response arrived) is sent once more on a new connection, as Go's client does. A POST (a create,
//   an Event, a review) is sent once more only when writing it failed: once written, the server may
//   have acted on it before closing, and a second create is not the same as one (Go: isReplayable).
// - `close()` destroys every connection, idle or busy, and clears the idle timer.
// - A connection idle for `idleMs` is closed by the pool's one idle timer, not kept until the next request.

import {
  type Abortable,
  Connection,
  enc,
  Http1Error,
  indexOfBlankLine,
  INITIAL_BUFFER,
  isClosedSocket,
  latin1,
  raced,
} from "./_http1_connection.ts";
import { type ConnectionOwner, type Framing, Http1Response } from "./_http1_response.ts";
import { concatBytes } from "../../util/mod.ts";

export type { Abortable } from "./_http1_connection.ts";
export { Http1Error } from "./_http1_connection.ts";
export { Http1Response } from "./_http1_response.ts";

export interface Http1Options {
  /** `https://host:port` or `http://host:port` (no path). */
  origin: string;
  caCerts?: string[];
  /** Client certificate and key, PEM. */
  cert?: string;
  key?: string;
  /**
   * The name sent as SNI and checked against the server's certificate instead of the origin's host (kubeconfig
   * `tls-server-name`). Not with `cert` and `key`: Deno.connectTls takes no server name (refused on connect).
   */
  serverName?: string;
  /**
   * An idle connection is closed this long after its last response (one timer per pool, armed only while some
   * connection idles), so a quiet cluster keeps no socket, TLS state or buffer beyond its watches. Default 30 s.
   */
  idleMs?: number;
  /** Idle connections kept at most. Default 64. */
  maxIdle?: number;
}

/**
 * Keep-alive HTTP/1.1 connections to one API server.
 */
export class Http1Pool implements ConnectionOwner {
  readonly #hostname: string;
  readonly #port: number;
  readonly #host: string;
  readonly #tls: boolean;
  readonly #o: Http1Options;
  readonly #idleMs: number;
  readonly #maxIdle: number;
  readonly #idle: Connection[] = [];
  readonly #busy = new Set<Connection>();
  #closed = false;
  /** Closes connections idle for `idleMs`; set only while the idle list is not empty. */
  #reaper: ReturnType<typeof setTimeout> | undefined;

  constructor(options: Http1Options) {
    const url = new URL(options.origin);
    if (url.protocol !== "https:" && url.protocol !== "http:") {
      throw new Http1Error(`unsupported scheme ${url.protocol}`);
    }
    this.#tls = url.protocol === "https:";
    this.#hostname = url.hostname.replace(/^\[(.*)\]$/, "$1");
    this.#port = url.port ? Number(url.port) : this.#tls ? 443 : 80;
    this.#host = url.host;
    this.#o = options;
    this.#idleMs = options.idleMs ?? 30_000;
    this.#maxIdle = options.maxIdle ?? 64;
  }

  /** Connections open now (idle + busy), for tests. */
  get open(): number {
    return this.#idle.length + this.#busy.size;
  }

  /**
   * Sends one request and resolves with the response head; read the body from the response.
   * `target` is the path and query; `headerLines` are `Name: value\r\n` lines (no Host, no
   * Content-Length), checked by the caller to hold no CR or LF inside a value.
   */
  async request(
    method: string,
    target: string,
    headerLines: string,
    body: Uint8Array | undefined,
    abort: Abortable,
  ): Promise<Http1Response> {
    let head = `${method} ${target} HTTP/1.1\r\nHost: ${this.#host}\r\n${headerLines}`;
    if (body) head += `Content-Length: ${body.length}\r\n`;
    else if (method === "POST" || method === "PUT" || method === "PATCH") head += "Content-Length: 0\r\n";
    head += "\r\n";
    const headBytes = enc.encode(head);
    const bytes = body ? concatBytes([headBytes, body]) : headBytes;
    for (let attempt = 0;; attempt++) {
      // A retry never takes another pooled connection: it was probably closed along with the first.
      const c = await this.#checkout(abort, attempt === 0);
      const reused = c.served > 0;
      // Also live while the body is read; once the connection is back in the pool it is not ours.
      c.owner = abort;
      abort.onAbort(() => {
        if (c.owner === abort) this.destroy(c);
      });
      // An abort between the checkout and the line above ran no hook: without this, a watch aborted there (a
      // pre-flight attempt that failed, a shutdown) would be sent and held open until the server ends it.
      if (abort.aborted !== undefined) {
        this.destroy(c);
        throw abort.aborted;
      }
      let written = false;
      try {
        await c.write(bytes);
        written = true;
        const res = await this.#readHead(c, method, abort, reused && attempt === 0 && method !== "POST");
        if (res === "retry") {
          this.#dropIdle();
          continue;
        }
        return res;
      } catch (err) {
        this.destroy(c);
        if (abort.aborted !== undefined) throw abort.aborted;
        if (err instanceof Http1Error) throw err;
        if (reused && attempt === 0 && isClosedSocket(err) && (!written || method !== "POST")) {
          this.#dropIdle();
          continue;
        }
        throw err;
      }
    }
  }

  /** Returns a connection after a fully read response. */
  release(c: Connection): void {
    c.owner = undefined;
    this.#busy.delete(c);
    if (this.#closed || c.closed || this.#idle.length >= this.#maxIdle) {
      c.close();
      return;
    }
    c.idleSince = Date.now();
    // A buffer grown for a large list page goes back to the small one: the idle socket needs none of it.
    if (c.buf.length > INITIAL_BUFFER && c.start === c.end) {
      c.buf = new Uint8Array(INITIAL_BUFFER);
      c.start = c.end = 0;
    }
    this.#idle.push(c);
    this.#armReaper(this.#idleMs);
  }

  #armReaper(ms: number): void {
    if (this.#reaper !== undefined) return;
    const timer = setTimeout(() => {
      this.#reaper = undefined;
      this.#reap();
    }, ms);
    Deno.unrefTimer(timer as unknown as number);
    this.#reaper = timer;
  }

  /** Closes the connections idle for `idleMs` or longer; re-arms for the next one to expire. */
  #reap(): void {
    const now = Date.now();
    let next = Infinity;
    for (let i = this.#idle.length - 1; i >= 0; i--) {
      const c = this.#idle[i];
      const left = c.idleSince + this.#idleMs - now;
      if (left <= 0 || c.closed) {
        this.#idle.splice(i, 1);
        c.close();
      } else next = Math.min(next, left);
    }
    if (Number.isFinite(next) && !this.#closed) this.#armReaper(Math.max(1, next));
  }

  /** Closes a connection that must not be reused. */
  destroy(c: Connection): void {
    this.#busy.delete(c);
    const i = this.#idle.indexOf(c);
    if (i >= 0) this.#idle.splice(i, 1);
    c.close();
  }

  close(): void {
    this.#closed = true;
    clearTimeout(this.#reaper);
    this.#reaper = undefined;
    for (const c of [...this.#idle, ...this.#busy]) c.close();
    this.#idle.length = 0;
    this.#busy.clear();
  }

  /** Closes every idle connection (the server restarted: they are all dead). */
  #dropIdle(): void {
    for (const c of this.#idle.splice(0)) c.close();
  }

  async #checkout(abort: Abortable, pooled: boolean): Promise<Connection> {
    if (this.#closed) throw new Http1Error("the connection pool is closed");
    const now = Date.now();
    while (pooled && this.#idle.length > 0) {
      const c = this.#idle.pop()!;
      if (now - c.idleSince < this.#idleMs && !c.closed && c.start === c.end) {
        this.#busy.add(c);
        return c;
      }
      c.close();
    }
    const c = new Connection(await this.#connect(abort));
    if (this.#closed || abort.aborted !== undefined) {
      c.close();
      throw abort.aborted ?? new Http1Error("the connection pool is closed");
    }
    this.#busy.add(c);
    return c;
  }

  async #connect(abort: Abortable): Promise<Deno.Conn> {
    const { caCerts, cert, key, serverName } = this.#o;
    const hostname = this.#hostname;
    const port = this.#port;
    if (!this.#tls) return await raced(Deno.connect({ hostname, port }), abort);
    if (cert && key && serverName) {
      throw new Http1Error("a server name other than the host cannot be checked with a client certificate");
    }
    if (cert && key) {
      // Deno.startTls takes no client certificate; connectTls does (its TCP connect cannot be
      // aborted, but a late connection is closed as soon as it arrives, see raced()).
      return await raced(
        Deno.connectTls({ hostname, port, caCerts, cert, key, alpnProtocols: ["http/1.1"] }),
        abort,
      );
    }
    const ac = new AbortController();
    abort.onAbort(() => ac.abort());
    const tcp = await raced(Deno.connect({ hostname, port, signal: ac.signal }), abort);
    try {
      tcp.setNoDelay(true);
    } catch {
      // Not every platform allows it; latency only.
    }
    // The handshake itself runs on the first write, so an abort (closing the socket) ends it.
    return await Deno.startTls(tcp, { hostname: serverName ?? hostname, caCerts, alpnProtocols: ["http/1.1"] });
  }

  async #readHead(
    c: Connection,
    method: string,
    abort: Abortable,
    mayRetry: boolean,
  ): Promise<Http1Response | "retry"> {
    let end = -1;
    let scanned = 0; // bytes after c.start already searched (fill() may move c.start)
    for (;;) {
      end = indexOfBlankLine(c.buf, c.start + Math.max(0, scanned - 3), c.end);
      if (end >= 0) break;
      scanned = c.end - c.start;
      if (c.end - c.start > 64 * 1024) throw new Http1Error("response headers larger than 64 KiB");
      let more: boolean;
      try {
        more = await c.fill();
      } catch (err) {
        if (abort.aborted !== undefined) throw abort.aborted;
        if (mayRetry && c.end === c.start && isClosedSocket(err)) {
          this.destroy(c);
          return "retry";
        }
        throw err;
      }
      if (!more) {
        if (mayRetry && c.end === c.start) {
          this.destroy(c);
          return "retry";
        }
        throw new Http1Error("the connection closed before a response arrived");
      }
    }
    const head = latin1.decode(c.buf.subarray(c.start, end));
    c.start = end + 4;
    const http10 = head.startsWith("HTTP/1.0 ");
    if (!http10 && !head.startsWith("HTTP/1.1 ")) throw new Http1Error("the server did not answer with HTTP/1.1");
    const status = Number(head.slice(9, 12));
    if (!/^\d{3}$/.test(head.slice(9, 12))) throw new Http1Error("the server did not answer with HTTP/1.1");
    if (status < 200) throw new Http1Error(`unexpected informational response ${status}`);
    // One pass over the header lines; only the three that frame the body are read now (they all
    // start with c or t), the rest only if `headers` is asked for.
    let te: string | undefined;
    let cl: string | undefined;
    let connection = "";
    for (let pos = head.indexOf("\r\n"); pos >= 0;) {
      const next = head.indexOf("\r\n", pos + 2);
      const lineEnd = next < 0 ? head.length : next;
      const colon = head.indexOf(":", pos + 2);
      if (colon <= pos + 2 || colon > lineEnd) throw new Http1Error("malformed response header line");
      const first = head.charCodeAt(pos + 2) | 0x20;
      if (first === 0x63 || first === 0x74) {
        const name = head.slice(pos + 2, colon).trim().toLowerCase();
        const value = head.slice(colon + 1, lineEnd).trim();
        if (name === "content-length") cl = value;
        else if (name === "transfer-encoding") te = value;
        else if (name === "connection") connection = value.toLowerCase();
      }
      pos = next;
    }
    c.served++;
    let keepAlive = http10 ? connection.includes("keep-alive") : !connection.includes("close");
    let framing: Framing;
    if (method === "HEAD" || status === 204 || status === 304) framing = { kind: "none" };
    else if (te !== undefined) {
      if (te.toLowerCase() !== "chunked") throw new Http1Error(`unsupported transfer-encoding ${te}`);
      framing = { kind: "chunked" };
    } else if (cl !== undefined) {
      if (!/^\d{1,15}$/.test(cl)) throw new Http1Error("malformed content-length");
      const left = Number(cl);
      framing = left === 0 ? { kind: "none" } : { kind: "length", left };
    } else {
      framing = { kind: "eof" };
      keepAlive = false;
    }
    return new Http1Response(this, c, status, head, framing, keepAlive, abort);
  }
}

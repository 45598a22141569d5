// HTTP/1.1 keep-alive connections on Deno's own TCP/TLS sockets: the KubeClient's default transport.
//
// Why not fetch: a status write through Deno's fetch cost the hub ~160 µs of CPU here, through these
// sockets ~95 µs (`deno run -A bench/transport_probe.ts`), and a watch event skips the web-streams
// machinery. The subset of HTTP/1.1 an API server speaks is small: Content-Length or chunked bodies,
// keep-alive, no 1xx, no compression unless asked for (we never ask).
//
// Guarantees:
// - A connection carries one request at a time and goes back to the idle pool only after its whole
//   response was read; anything unexpected (a parse error, an abort, a short body) destroys it.
// - An abort closes the socket, which rejects the pending read or write at once, in any phase
//   (TCP connect, TLS handshake, headers, body).
// - A request that finds a reused idle connection already closed by the server (no byte of a
//   response arrived) is sent once more on a new connection, as Go's and Node's clients do.
// - `close()` destroys every connection, idle or busy.

/** Cancellation as the client hands it over: a reason once aborted, and a cheap abort hook. */
export interface Abortable {
  /** The abort reason, once aborted. */
  readonly aborted: unknown;
  /** Registers `fn` to run on abort (at most once); not called if already aborted. */
  onAbort(fn: () => void): void;
}

export interface Http1Options {
  /** `https://host:port` or `http://host:port` (no path). */
  origin: string;
  caCerts?: string[];
  /** Client certificate and key, PEM. */
  cert?: string;
  key?: string;
  /** An idle connection older than this is closed rather than reused. Default 30 s. */
  idleMs?: number;
  /** Idle connections kept at most. Default 64. */
  maxIdle?: number;
}

/** The socket closed, or the response was not HTTP/1.1 as expected. Never carries header values. */
export class Http1Error extends Error {
  override name = "Http1Error";
}

const enc = new TextEncoder();
const latin1 = new TextDecoder("latin1");
const INITIAL_BUFFER = 16 * 1024;

/** One socket and its read buffer. */
class Connection {
  readonly #conn: Deno.Conn;
  buf = new Uint8Array(INITIAL_BUFFER);
  start = 0;
  end = 0;
  idleSince = 0;
  /** Requests served; > 0 means the connection was reused. */
  served = 0;
  closed = false;
  /** The request using the connection now, if any. */
  owner: Abortable | undefined;

  constructor(conn: Deno.Conn) {
    this.#conn = conn;
  }

  async write(bytes: Uint8Array): Promise<void> {
    let off = 0;
    while (off < bytes.length) off += await this.#conn.write(off === 0 ? bytes : bytes.subarray(off));
  }

  /** Reads more bytes into the buffer; false at EOF. */
  async fill(): Promise<boolean> {
    if (this.start > 0 && this.start === this.end) this.start = this.end = 0;
    if (this.end === this.buf.length) {
      if (this.start > 0) {
        this.buf.copyWithin(0, this.start, this.end);
        this.end -= this.start;
        this.start = 0;
      } else {
        const bigger = new Uint8Array(this.buf.length * 2);
        bigger.set(this.buf);
        this.buf = bigger;
      }
    }
    const n = await this.#conn.read(this.buf.subarray(this.end));
    if (n === null) return false;
    this.end += n;
    return true;
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    try {
      this.#conn.close();
    } catch {
      // Already closed.
    }
  }
}

type BodyMode = "copy" | "skip" | ((view: Uint8Array) => void);

type Framing = { kind: "length"; left: number } | { kind: "chunked" } | { kind: "eof" } | { kind: "none" };

/** One response; its body is read once, with `text()` or `chunks()`, or dropped with `cancel()`. */
export class Http1Response {
  readonly status: number;
  /** The status line and header lines, parsed into `headers` only if someone asks. */
  readonly #head: string;
  #headers: Map<string, string> | undefined;
  readonly #pool: Http1Pool;
  readonly #c: Connection;
  readonly #framing: Framing;
  readonly #keepAlive: boolean;
  readonly #abort: Abortable;
  #settled = false;

  constructor(
    pool: Http1Pool,
    c: Connection,
    status: number,
    head: string,
    framing: Framing,
    keepAlive: boolean,
    abort: Abortable,
  ) {
    this.#pool = pool;
    this.#c = c;
    this.status = status;
    this.#head = head;
    this.#framing = framing;
    this.#keepAlive = keepAlive;
    this.#abort = abort;
    if (framing.kind === "none") this.#finish(true);
  }

  get ok(): boolean {
    return this.status >= 200 && this.status < 300;
  }

  /** One header's value by name (any case), or null. */
  header(name: string): string | null {
    return this.headers.get(name.toLowerCase()) ?? null;
  }

  /** Lower-case header names; a repeated header keeps its last value. */
  get headers(): Map<string, string> {
    if (!this.#headers) {
      this.#headers = new Map();
      for (const line of this.#head.split("\r\n").slice(1)) {
        const colon = line.indexOf(":");
        this.#headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
      }
    }
    return this.#headers;
  }

  /** The whole body as UTF-8 text. */
  async text(): Promise<string> {
    // Decoded straight from views of the socket buffer: no copy of the bytes, and the pieces form a
    // rope that JSON.parse flattens once (a list page of 500 objects is ~350 KB read in 16 KB reads).
    const decoder = new TextDecoder();
    let text = "";
    for await (const _ of this.#body((view) => (text += decoder.decode(view, { stream: true })))) {
      /* the sink took every byte */
    }
    return text + decoder.decode();
  }

  /**
   * The body as it arrives: each yielded array is a fresh copy holding every body byte that the
   * last read delivered (several watch events at once under load). Ends at the body's end.
   */
  chunks(): AsyncGenerator<Uint8Array, void, undefined> {
    return this.#body("copy");
  }

  /** Reads the body to its end without keeping it (the connection can then be reused). */
  async discard(): Promise<void> {
    for await (const _ of this.#body("skip")) { /* nothing is yielded */ }
  }

  /**
   * Walks the body. "copy" yields fresh arrays; "skip" drops the bytes; a sink function receives
   * views of the socket buffer synchronously (valid only during the call) and nothing is yielded.
   */
  async *#body(mode: BodyMode): AsyncGenerator<Uint8Array, void, undefined> {
    const copy = mode === "copy";
    const sink = typeof mode === "function" ? mode : undefined;
    if (this.#settled) return;
    const c = this.#c;
    const f = this.#framing;
    let done = false;
    try {
      if (f.kind === "length") {
        while (f.left > 0) {
          if (c.end === c.start && !(await this.#fill())) throw new Http1Error("the connection closed mid-body");
          const n = Math.min(f.left, c.end - c.start);
          sink?.(c.buf.subarray(c.start, c.start + n));
          const out = copy ? c.buf.slice(c.start, c.start + n) : undefined;
          c.start += n;
          f.left -= n;
          if (f.left === 0) {
            // Copied out first: the connection may serve another request before the caller resumes.
            done = true;
            this.#finish(true);
          }
          if (out) yield out;
        }
      } else if (f.kind === "eof") {
        for (;;) {
          if (c.end > c.start) {
            sink?.(c.buf.subarray(c.start, c.end));
            const out = copy ? c.buf.slice(c.start, c.end) : undefined;
            c.start = c.end;
            if (out) yield out;
          }
          if (!(await this.#fill())) break;
        }
        done = true;
        this.#finish(false);
      } else if (f.kind === "chunked") {
        yield* this.#chunked(copy, sink);
        done = true;
      }
    } finally {
      if (!done) this.#finish(false);
    }
  }

  /** Drops the rest of the body (and the connection, unless the body was already read). */
  cancel(): void {
    this.#finish(false);
  }

  async *#chunked(copy: boolean, sink?: (view: Uint8Array) => void): AsyncGenerator<Uint8Array, void, undefined> {
    const c = this.#c;
    let inChunk = 0; // data bytes left in the current chunk
    let needCrlf = false; // the CRLF after a chunk's data is due
    for (;;) {
      const parts: Uint8Array[] = [];
      for (;;) {
        if (inChunk > 0) {
          const n = Math.min(inChunk, c.end - c.start);
          if (n === 0) break;
          sink?.(c.buf.subarray(c.start, c.start + n));
          if (copy) parts.push(c.buf.slice(c.start, c.start + n));
          c.start += n;
          inChunk -= n;
          if (inChunk === 0) needCrlf = true;
          continue;
        }
        if (needCrlf) {
          if (c.end - c.start < 2) break;
          if (c.buf[c.start] !== 13 || c.buf[c.start + 1] !== 10) throw new Http1Error("malformed chunked body");
          c.start += 2;
          needCrlf = false;
        }
        const eol = indexOfCrlf(c.buf, c.start, c.end);
        if (eol < 0) {
          if (c.end - c.start > 1024) throw new Http1Error("malformed chunked body: chunk size line too long");
          break;
        }
        const sizeText = latin1.decode(c.buf.subarray(c.start, eol));
        const semi = sizeText.indexOf(";");
        const hex = (semi < 0 ? sizeText : sizeText.slice(0, semi)).trim();
        if (!/^[0-9a-fA-F]{1,12}$/.test(hex)) throw new Http1Error("malformed chunked body: bad chunk size");
        const size = parseInt(hex, 16);
        if (size === 0) {
          // Trailers (none expected) end with an empty line.
          let at = eol + 2;
          for (;;) {
            const next = indexOfCrlf(c.buf, at, c.end);
            if (next < 0) {
              if (!(await this.#fill())) throw new Http1Error("the connection closed in the chunked trailer");
              continue;
            }
            if (next === at) {
              c.start = next + 2;
              break;
            }
            at = next + 2;
          }
          if (parts.length) yield concat(parts);
          this.#finish(true);
          return;
        }
        c.start = eol + 2;
        inChunk = size;
      }
      if (parts.length) yield parts.length === 1 ? parts[0] : concat(parts);
      if (!(await this.#fill())) throw new Http1Error("the connection closed mid-body");
    }
  }

  async #fill(): Promise<boolean> {
    try {
      return await this.#c.fill();
    } catch (err) {
      if (this.#abort.aborted !== undefined) throw this.#abort.aborted;
      if (isClosedSocket(err)) throw new Http1Error("the connection closed mid-body", { cause: err });
      throw err;
    }
  }

  #finish(complete: boolean): void {
    if (this.#settled) return;
    this.#settled = true;
    if (complete && this.#keepAlive && this.#abort.aborted === undefined) this.#pool.release(this.#c);
    else this.#pool.destroy(this.#c);
  }
}

/**
 * Keep-alive HTTP/1.1 connections to one API server.
 */
export class Http1Pool {
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
    const bytes = body ? concat([headBytes, body]) : headBytes;
    for (let attempt = 0;; attempt++) {
      // A retry never takes another pooled connection: it was probably closed along with the first.
      const c = await this.#checkout(abort, attempt === 0);
      const reused = c.served > 0;
      // Also live while the body is read; once the connection is back in the pool it is not ours.
      c.owner = abort;
      abort.onAbort(() => {
        if (c.owner === abort) this.destroy(c);
      });
      try {
        await c.write(bytes);
        const res = await this.#readHead(c, method, abort, reused && attempt === 0);
        if (res === "retry") {
          this.#dropIdle();
          continue;
        }
        return res;
      } catch (err) {
        this.destroy(c);
        if (abort.aborted !== undefined) throw abort.aborted;
        if (err instanceof Http1Error) throw err;
        if (reused && attempt === 0 && isClosedSocket(err)) {
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
    this.#idle.push(c);
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
    const { caCerts, cert, key } = this.#o;
    const hostname = this.#hostname;
    const port = this.#port;
    if (!this.#tls) return await raced(Deno.connect({ hostname, port }), abort);
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
    return await Deno.startTls(tcp, { hostname, caCerts, alpnProtocols: ["http/1.1"] });
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

/** Resolves like `p` unless `abort` fires first; a connection arriving after the abort is closed. */
function raced<T extends { close(): void }>(p: Promise<T>, abort: Abortable): Promise<T> {
  if (abort.aborted !== undefined) {
    p.then((c) => c.close(), () => {});
    return Promise.reject(abort.aborted);
  }
  return new Promise<T>((resolve, reject) => {
    let late = false;
    abort.onAbort(() => {
      late = true;
      reject(abort.aborted);
    });
    p.then((c) => {
      if (late) c.close();
      else resolve(c);
    }, (err) => {
      if (!late) reject(err);
    });
  });
}

/** The peer closed or reset the socket (rustls reports a close without close_notify as a plain Error). */
function isClosedSocket(err: unknown): boolean {
  return err instanceof Deno.errors.ConnectionReset || err instanceof Deno.errors.BrokenPipe ||
    err instanceof Deno.errors.ConnectionAborted || err instanceof Deno.errors.UnexpectedEof ||
    (err instanceof Error && /close_notify|unexpected eof/i.test(err.message));
}

function indexOfCrlf(b: Uint8Array, from: number, to: number): number {
  for (let i = from; i + 1 < to; i++) {
    if (b[i] === 13 && b[i + 1] === 10) return i;
  }
  return -1;
}

function indexOfBlankLine(b: Uint8Array, from: number, to: number): number {
  for (let i = from; i + 3 < to; i++) {
    if (b[i] === 13 && b[i + 1] === 10 && b[i + 2] === 13 && b[i + 3] === 10) return i;
  }
  return -1;
}

function concat(parts: Uint8Array[]): Uint8Array {
  let n = 0;
  for (const p of parts) n += p.length;
  const out = new Uint8Array(n);
  let off = 0;
  for (const p of parts) {
    out.set(p, off);
    off += p.length;
  }
  return out;
}

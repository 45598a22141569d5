// Admission for the hub's HTTP ports: a connection cap and a header-read deadline in front of Deno.serve.

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
  /** Terminate TLS with this pair (the protected port); plain TCP when absent. */
  tls?: { cert: string; key: string };
  /** Called each time the gate closes a connection on its own, with the reason (e.g. to count it in /metrics). */
  onShed?(reason: ShedReason): void;
}

/** Why the gate closed a connection before the server behind answered it. */
export type ShedReason = "refused" | "evicted" | "timedOut" | "oversized";

/** What the gate has done since it started; for tests and /metrics. */
export interface ConnectionGateStats {
  accepted: number;
  /** Closed at once: the cap was reached and every open connection was already handed on. */
  refused: number;
  /** Closed while still sending its head, to make room for a newer connection once the cap was reached. */
  evicted: number;
  /** Closed because its head did not arrive within the header timeout. */
  timedOut: number;
  /** Closed because the head exceeded maxHeaderBytes. */
  oversized: number;
  /** Handed on to the server behind the gate. */
  handedOn: number;
}

/** Thrown when the gate cannot bind its address. */
export class ConnectionGateError extends Error {
  override name = "ConnectionGateError";
}

/**
 * Opens the connection behind the gate for one accepted client, once its request head has arrived; `release` is
 * called once that connection is closed.
 */
export type Upstream = () => Promise<{ conn: Deno.Conn; release(): void }>;

const END_CRLF = [13, 10, 13, 10];
const END_LF = [10, 10];
const CLOSE_CRLF = new TextEncoder().encode("connection: close\r\n");
const CLOSE_LF = new TextEncoder().encode("connection: close\n");
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
 * - at most `maxConnections` client connections are open at once; when a new one arrives at the cap, the oldest one
 *   still sending its head is closed to make room (a slow client loses its place to a newer one), and when every open
 *   connection has already been handed on, the new one is closed at once;
 * - a connection whose head (TLS handshake included) has not arrived within `headerTimeoutMs` of its accept is
 *   closed, as is any connection `lifetimeMs` after its accept, so a client that trickles bytes holds nothing for
 *   long;
 * - `close()` stops accepting at once, closes connections still sending their heads, and lets handed-on ones finish
 *   (each within its lifetime); `abort()` closes them too; `finished` settles once every connection is closed.
 * - one request per connection: the head handed on says `connection: close` (added after the request line, which
 *   wins over any keep-alive the client asked for), so the server behind closes after its answer and every request
 *   is subject to the header deadline.
 * Assumptions: HTTP/1.x only (no ALPN offered); the server behind honours a request's `connection: close`, as
 * Deno.serve does.
 */
export class ConnectionGate {
  readonly addr: Deno.NetAddr;
  readonly finished: Promise<void>;
  readonly #listener: Deno.Listener;
  readonly #upstream: Upstream;
  readonly #onShed: (reason: ShedReason) => void;
  readonly #headerTimeoutMs: number;
  readonly #maxConnections: number;
  readonly #lifetimeMs: number;
  readonly #maxHeaderBytes: number;
  /** Open client connections still sending their heads, oldest first. */
  readonly #waiting = new Set<Deno.Conn>();
  readonly #handedOn = new Set<Deno.Conn>();
  readonly #running = new Set<Promise<void>>();
  readonly #stats: ConnectionGateStats = {
    accepted: 0,
    refused: 0,
    evicted: 0,
    timedOut: 0,
    oversized: 0,
    handedOn: 0,
  };
  #closed = false;

  /** Binds now (throwing ConnectionGateError naming the address) and starts accepting. */
  constructor(options: ConnectionGateOptions, upstream: Upstream) {
    this.#headerTimeoutMs = positive(options.headerTimeoutMs ?? 10_000, "headerTimeoutMs");
    this.#maxConnections = positive(options.maxConnections ?? 256, "maxConnections");
    this.#lifetimeMs = positive(options.lifetimeMs ?? 60_000, "lifetimeMs");
    this.#maxHeaderBytes = positive(options.maxHeaderBytes ?? 16 * 1024, "maxHeaderBytes");
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
    try {
      this.#listener.close();
    } catch { /* already closed */ }
    for (const conn of this.#waiting) closeQuietly(conn);
  }

  /** Closes every connection now, handed on or not (the end of a grace period after `close()`). */
  abort(): void {
    this.close();
    for (const conn of this.#handedOn) closeQuietly(conn);
  }

  async #acceptLoop(): Promise<void> {
    while (!this.#closed) {
      let conn: Deno.Conn;
      try {
        conn = await this.#listener.accept();
      } catch (err) {
        if (this.#closed || err instanceof Deno.errors.BadResource) break;
        // Out of file descriptors or a reset before accept: try again shortly rather than spin.
        await new Promise((resolve) => setTimeout(resolve, 50));
        continue;
      }
      this.#stats.accepted++;
      if (!this.#admit()) {
        this.#shed("refused");
        closeQuietly(conn);
        continue;
      }
      const done = this.#serve(conn).finally(() => this.#running.delete(done));
      this.#running.add(done);
    }
    this.close();
    while (this.#running.size > 0) await Promise.allSettled([...this.#running]);
  }

  #shed(reason: ShedReason): void {
    this.#stats[reason]++;
    this.#onShed(reason);
  }

  /** Makes room for one more connection if the cap allows, evicting the oldest one still sending its head. */
  #admit(): boolean {
    if (this.open < this.#maxConnections) return true;
    const oldest = this.#waiting.values().next();
    if (oldest.done) return false;
    this.#waiting.delete(oldest.value);
    this.#shed("evicted");
    closeQuietly(oldest.value);
    return true;
  }

  async #serve(conn: Deno.Conn): Promise<void> {
    this.#waiting.add(conn);
    let reason: "timedOut" | undefined;
    const headTimer = setTimeout(() => {
      reason = "timedOut";
      closeQuietly(conn);
    }, this.#headerTimeoutMs);
    const lifeTimer = setTimeout(() => closeQuietly(conn), this.#lifetimeMs);
    let upstream: { conn: Deno.Conn; release(): void } | undefined;
    try {
      const head = await this.#readHead(conn);
      clearTimeout(headTimer);
      if (head === "oversized") {
        this.#shed("oversized");
        await conn.write(TOO_LARGE).catch(() => {});
        return;
      }
      if (!head || !this.#waiting.delete(conn)) return;
      this.#handedOn.add(conn);
      this.#stats.handedOn++;
      upstream = await this.#upstream();
      await writeAll(upstream.conn, oneRequestOnly(head));
      const inner = upstream.conn;
      // The client's end of input does not end the exchange (the answer may still be on its way); its connection
      // failing or being closed here (lifetime, abort) does, by closing the server's side too.
      void copy(conn, inner).then((eof) => eof || closeQuietly(inner));
      await copy(inner, conn);
    } catch {
      // A client or the server behind went away: nothing to report beyond closing both ends.
    } finally {
      clearTimeout(headTimer);
      clearTimeout(lifeTimer);
      if (reason) this.#shed("timedOut");
      this.#waiting.delete(conn);
      this.#handedOn.delete(conn);
      closeQuietly(conn);
      if (upstream) {
        closeQuietly(upstream.conn);
        upstream.release();
      }
    }
  }

  /** Reads until the empty line that ends a request head; null when the client left first. */
  async #readHead(conn: Deno.Conn): Promise<Uint8Array | "oversized" | null> {
    let head = new Uint8Array(0);
    const buf = new Uint8Array(4096);
    for (;;) {
      const n = await conn.read(buf);
      if (n === null) return null;
      const next = new Uint8Array(head.length + n);
      next.set(head);
      next.set(buf.subarray(0, n), head.length);
      const from = Math.max(0, head.length - 3);
      head = next;
      if (endsHead(head, from)) return head;
      if (head.length > this.#maxHeaderBytes) return "oversized";
    }
  }
}

/** The head with `connection: close` inserted after its request line (a line without an end is left alone). */
export function oneRequestOnly(head: Uint8Array): Uint8Array {
  const eol = head.indexOf(10);
  if (eol < 0) return head;
  const line = head[eol - 1] === 13 ? CLOSE_CRLF : CLOSE_LF;
  const out = new Uint8Array(head.length + line.length);
  out.set(head.subarray(0, eol + 1));
  out.set(line, eol + 1);
  out.set(head.subarray(eol + 1), eol + 1 + line.length);
  return out;
}

/** Whether `bytes` holds an empty line (CRLF CRLF, or LF LF as lenient parsers accept) at or after `from`. */
export function endsHead(bytes: Uint8Array, from = 0): boolean {
  for (let i = from; i < bytes.length; i++) {
    if (bytes[i] !== 10 && bytes[i] !== 13) continue;
    if (matches(bytes, i, END_CRLF) || matches(bytes, i, END_LF)) return true;
  }
  return false;
}

function matches(bytes: Uint8Array, at: number, pattern: number[]): boolean {
  if (at + pattern.length > bytes.length) return false;
  for (let j = 0; j < pattern.length; j++) if (bytes[at + j] !== pattern[j]) return false;
  return true;
}

/** Copies until `from` ends (true) or either side fails (false); never rejects. */
async function copy(from: Deno.Conn, to: Deno.Conn): Promise<boolean> {
  const buf = new Uint8Array(16 * 1024);
  try {
    for (;;) {
      const n = await from.read(buf);
      if (n === null) return true;
      await writeAll(to, buf.subarray(0, n));
    }
  } catch {
    return false; // one side closed: the exchange is over
  }
}

async function writeAll(conn: Deno.Conn, bytes: Uint8Array): Promise<void> {
  for (let off = 0; off < bytes.length;) off += await conn.write(bytes.subarray(off));
}

function closeQuietly(conn: Deno.Conn): void {
  try {
    conn.close();
  } catch { /* already closed */ }
}

function positive(value: number, what: string): number {
  if (!Number.isFinite(value) || value <= 0) {
    throw new RangeError(`cannot start a connection gate: ${what} must be a positive number, got ${value}`);
  }
  return value;
}

// A stranger's load on an HTTPS port (the hub's admission port): idle connections, TLS or bare TCP, and slowloris heads
// trickled a line at a time, each reopened when the server closes it, bounded in count and time; loopback only.

/** What to open and for how long. */
export interface FloodOptions {
  /** The port on 127.0.0.1 (loopback only: the flood never leaves the machine). */
  port: number;
  /** The CA that verifies the server's certificate (the TLS handshake completes, as a real client's). */
  caCert: string;
  /** Connections that complete the TLS handshake, then send nothing. */
  tlsIdle?: number;
  /** Connections that connect and never say hello (no TLS at all). */
  tcpIdle?: number;
  /** Connections that complete the handshake, then send a request head one header line every `trickleMs`. */
  slowloris?: number;
  /** The path the slowloris heads name. Default a webhook path. */
  path?: string;
  /** How often a slowloris connection sends its next header line. Default 1 s. */
  trickleMs?: number;
  /** Reopen each connection the server closes (the attacker keeps the numbers up). Default true. */
  reopen?: boolean;
  /** At most this many connects tried in all, first ones included. Default 10 × the connections. */
  maxOpens?: number;
  /** Everything stops this long after `start` at the latest. Default 60 s. */
  maxDurationMs?: number;
  /** Connections being opened (connect and handshake) at once. Default 64. */
  concurrency?: number;
}

/** What the flood did. */
export interface FloodStats {
  /** Connections opened (connected, and for TLS kinds handshaken). */
  opened: number;
  /** Connects or handshakes that failed (refused, reset, closed during the handshake). */
  failed: number;
  /** Open connections the server closed. */
  closedByServer: number;
  /** Connections open now. */
  open: number;
}

type Kind = "tls" | "tcp" | "slowloris";

/**
 * Opens the connections of `options` and keeps them open (reopening what the server closes) until `stop()`, the
 * open budget or the duration runs out.
 *
 * Guarantees: connects only to 127.0.0.1; never more than the asked connections open at once, `maxOpens` opened in
 * all, or `maxDurationMs` of activity; refuses to start when the process's open-file limit (/proc/self/limits) cannot
 * hold the connections and 256 more; `stop()` closes every connection and settles once each loop ended.
 */
export class WebhookFlood {
  readonly #o: Required<FloodOptions>;
  readonly #open = new Set<Deno.Conn>();
  readonly #handshaking = new Set<Deno.Conn>();
  readonly #stats = { opened: 0, failed: 0, closedByServer: 0 };
  readonly #loops: Promise<void>[] = [];
  #stopped = false;
  #attempts = 0;
  #inFlight = 0;
  readonly #waiters: (() => void)[] = [];
  #deadline: ReturnType<typeof setTimeout> | undefined;

  constructor(options: FloodOptions) {
    const total = (options.tlsIdle ?? 0) + (options.tcpIdle ?? 0) + (options.slowloris ?? 0);
    this.#o = {
      tlsIdle: 0,
      tcpIdle: 0,
      slowloris: 0,
      path: "/admission/website/validating/image/prod",
      trickleMs: 1_000,
      reopen: true,
      maxOpens: 10 * total,
      maxDurationMs: 60_000,
      concurrency: 64,
      ...options,
    };
    const limit = openFileLimit();
    if (limit !== undefined && total + 256 > limit) {
      throw new RangeError(
        `cannot flood with ${total} connections: this process may open ${limit} files (ulimit -n); lower the counts`,
      );
    }
  }

  get stats(): FloodStats {
    return { ...this.#stats, open: this.#open.size };
  }

  /** Starts every connection's loop; `firstPass` settles once each was tried once (opened or failed). */
  start(): void {
    this.#deadline = setTimeout(() => this.stop(), this.#o.maxDurationMs);
    const firsts: Promise<void>[] = [];
    const kinds: [Kind, number][] = [
      ["tcp", this.#o.tcpIdle],
      ["tls", this.#o.tlsIdle],
      ["slowloris", this.#o.slowloris],
    ];
    for (const [kind, n] of kinds) {
      for (let i = 0; i < n; i++) {
        let first!: () => void;
        firsts.push(new Promise<void>((r) => first = r));
        this.#loops.push(this.#loop(kind, first));
      }
    }
    this.firstPass = Promise.all(firsts).then(() => {});
  }

  /** Settles once every connection was tried once (after `start`). */
  firstPass: Promise<void> = Promise.resolve();

  /** Waits until `check` holds for the stats (polling every 50 ms), or `timeoutMs` passes: then throws. */
  async until(check: (s: FloodStats) => boolean, timeoutMs: number, what: string): Promise<FloodStats> {
    const end = Date.now() + timeoutMs;
    while (!check(this.stats)) {
      if (Date.now() > end) {
        throw new Error(`flood: ${what} not reached in ${timeoutMs} ms: ${JSON.stringify(this.stats)}`);
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    return this.stats;
  }

  /** Closes everything and settles once every loop ended. */
  async stop(): Promise<FloodStats> {
    this.#stopped = true;
    clearTimeout(this.#deadline);
    for (const c of [...this.#open, ...this.#handshaking]) closeQuietly(c);
    for (const w of this.#waiters.splice(0)) w();
    await Promise.all(this.#loops);
    return this.stats;
  }

  async #loop(kind: Kind, first: () => void): Promise<void> {
    let tried = false;
    while (!this.#stopped && this.#attempts < this.#o.maxOpens) {
      this.#attempts++;
      const conn = await this.#slot(() => this.#connect(kind));
      if (!tried) {
        tried = true;
        first();
      }
      if (!conn) {
        // Refused or reset: try again a little later, as a client would.
        await new Promise((r) => setTimeout(r, 100));
      } else {
        this.#open.add(conn);
        this.#stats.opened++;
        await this.#hold(kind, conn);
        this.#open.delete(conn);
        closeQuietly(conn);
        if (!this.#stopped) this.#stats.closedByServer++;
      }
      if (!this.#o.reopen) break;
    }
    if (!tried) first();
  }

  /** Runs `open` when fewer than `concurrency` opens are in flight. */
  async #slot<T>(open: () => Promise<T>): Promise<T> {
    while (this.#inFlight >= this.#o.concurrency && !this.#stopped) {
      await new Promise<void>((r) => this.#waiters.push(r));
    }
    this.#inFlight++;
    try {
      return await open();
    } finally {
      this.#inFlight--;
      this.#waiters.shift()?.();
    }
  }

  async #connect(kind: Kind): Promise<Deno.Conn | undefined> {
    if (this.#stopped) return undefined;
    try {
      if (kind === "tcp") return await Deno.connect({ hostname: "127.0.0.1", port: this.#o.port });
      const conn = await Deno.connectTls({ hostname: "127.0.0.1", port: this.#o.port, caCerts: [this.#o.caCert] });
      // Tracked during its handshake too, so `stop()` ends a handshake the server holds.
      this.#handshaking.add(conn);
      try {
        await conn.handshake();
      } catch (err) {
        closeQuietly(conn);
        throw err;
      } finally {
        this.#handshaking.delete(conn);
      }
      if (this.#stopped) {
        closeQuietly(conn);
        return undefined;
      }
      return conn;
    } catch {
      this.#stats.failed++;
      return undefined;
    }
  }

  /** Holds `conn` (trickling a head for slowloris) until the server closes it or the flood stops. */
  async #hold(kind: Kind, conn: Deno.Conn): Promise<void> {
    const closed = conn.read(new Uint8Array(1024)).then(() => {}, () => {});
    if (kind !== "slowloris") return await closed;
    const enc = new TextEncoder();
    let gone = false;
    void closed.then(() => gone = true);
    let line = `POST ${this.#o.path} HTTP/1.1\r\n`;
    for (let i = 0; !gone && !this.#stopped; i++) {
      try {
        await conn.write(enc.encode(line));
      } catch {
        break;
      }
      line = `x-slow-${i}: ${"a".repeat(16)}\r\n`;
      await Promise.race([closed, new Promise((r) => setTimeout(r, this.#o.trickleMs))]);
    }
    await closed;
  }
}

/** The soft limit on open files of this process, from /proc/self/limits; undefined when unknown. */
export function openFileLimit(pid: number | "self" = "self"): number | undefined {
  try {
    const text = Deno.readTextFileSync(`/proc/${pid}/limits`);
    const m = /^Max open files\s+(\d+|unlimited)/m.exec(text);
    return m && m[1] !== "unlimited" ? Number(m[1]) : undefined;
  } catch {
    return undefined;
  }
}

function closeQuietly(conn: Deno.Conn): void {
  try {
    conn.close();
  } catch { /* closed */ }
}

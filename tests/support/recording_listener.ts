// A TCP listener on 127.0.0.1 standing in for an attacker's server: it answers nothing and records every connection
// and every byte it is sent (plain HTTP requests with their headers, or a TLS ClientHello).
//
// Guarantees: binds 127.0.0.1 only; `close()` closes the listener and every open connection and settles once every
// task has ended. The bytes of all connections are kept (up to `maxBytes` in all), so a test can ask whether a
// marker, such as a token file's content, was ever sent.

/** One connection the listener accepted. */
export interface RecordedConnection {
  /** performance.now() at accept. */
  at: number;
  /** Bytes received on it (within the listener's `maxBytes` budget). */
  bytes: number;
}

/** Options of {@linkcode RecordingListener.start}. */
export interface RecordingListenerOptions {
  /** How many received bytes to keep, over all connections. Default 4 MiB. */
  maxBytes?: number;
}

/** A silent TCP listener that records what reaches it. */
export class RecordingListener {
  readonly port: number;
  readonly connections: RecordedConnection[] = [];
  readonly #listener: Deno.Listener;
  readonly #open = new Set<Deno.Conn>();
  readonly #tasks = new Set<Promise<void>>();
  readonly #chunks: Uint8Array[] = [];
  readonly #maxBytes: number;
  #kept = 0;
  #accepting: Promise<void>;

  private constructor(listener: Deno.Listener, maxBytes: number) {
    this.#listener = listener;
    this.#maxBytes = maxBytes;
    this.port = (listener.addr as Deno.NetAddr).port;
    this.#accepting = this.#accept();
  }

  /** Starts listening on a port the OS picks. */
  static start(options: RecordingListenerOptions = {}): RecordingListener {
    return new RecordingListener(Deno.listen({ hostname: "127.0.0.1", port: 0 }), options.maxBytes ?? 4 << 20);
  }

  /** `SCHEME://127.0.0.1:PORT` for a kubeconfig's server or proxy-url. */
  url(scheme: "http" | "https"): string {
    return `${scheme}://127.0.0.1:${this.port}`;
  }

  /** Whether `marker` occurs in what any connection sent (as UTF-8, within the kept bytes). */
  received(marker: string): boolean {
    const all = new Uint8Array(this.#kept);
    let at = 0;
    for (const c of this.#chunks) {
      all.set(c, at);
      at += c.length;
    }
    return new TextDecoder().decode(all).includes(marker);
  }

  /** A short description of what arrived, for failure messages (first bytes of the first connections, escaped). */
  describe(): string {
    const head = new TextDecoder().decode(this.#chunks[0] ?? new Uint8Array()).slice(0, 120);
    return `${this.connections.length} connection(s), ${this.#kept} byte(s) kept; first bytes: ${JSON.stringify(head)}`;
  }

  /** Stops listening and closes every connection. */
  async close(): Promise<void> {
    try {
      this.#listener.close();
    } catch { /* already closed */ }
    for (const conn of this.#open) {
      try {
        conn.close();
      } catch { /* already closed */ }
    }
    await this.#accepting;
    await Promise.all([...this.#tasks]);
  }

  async #accept(): Promise<void> {
    try {
      for await (const conn of this.#listener) {
        const record: RecordedConnection = { at: performance.now(), bytes: 0 };
        this.connections.push(record);
        this.#open.add(conn);
        const task = this.#read(conn, record).finally(() => {
          this.#open.delete(conn);
          this.#tasks.delete(task);
        });
        this.#tasks.add(task);
      }
    } catch { /* closed */ }
  }

  async #read(conn: Deno.Conn, record: RecordedConnection): Promise<void> {
    const buf = new Uint8Array(16 * 1024);
    try {
      while (true) {
        const n = await conn.read(buf);
        if (n === null) break;
        record.bytes += n;
        const keep = Math.min(n, this.#maxBytes - this.#kept);
        if (keep > 0) {
          this.#chunks.push(buf.slice(0, keep));
          this.#kept += keep;
        }
      }
    } catch {
      /* reset or closed by close() */
    } finally {
      try {
        conn.close();
      } catch { /* already closed */ }
    }
  }
}

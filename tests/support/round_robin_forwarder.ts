// What a Service is in front of several replicas, on this machine: a TCP forwarder on 127.0.0.1 that sends each new
// connection to the next backend port in turn, skipping a backend that refuses the connection (a killed replica).
//
// Guarantees: bytes are copied unchanged both ways (TLS passes through); a backend that refuses is skipped for that
// connection (the next one is tried, each at most once), and a connection no backend takes is closed; when the backend
// closes or either side fails, both are closed (the client's end of input is passed on); `connections[i]` counts the connections backend i took; `close()` closes the socket and
// every open connection and settles once they are closed.

export class RoundRobinForwarder {
  readonly port: number;
  /** Connections each backend took, by index in `backends`. */
  readonly connections: number[];
  /** Connections no backend took. */
  dropped = 0;
  readonly #listener: Deno.Listener;
  readonly #backends: number[];
  readonly #open = new Set<Deno.Conn>();
  readonly #running = new Set<Promise<void>>();
  readonly #accepting: Promise<void>;
  #next = 0;
  #closed = false;

  constructor(backends: number[]) {
    this.#backends = backends;
    this.connections = backends.map(() => 0);
    this.#listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
    this.port = (this.#listener.addr as Deno.NetAddr).port;
    this.#accepting = this.#accept();
  }

  async close(): Promise<void> {
    this.#closed = true;
    try {
      this.#listener.close();
    } catch { /* closed */ }
    for (const c of this.#open) quietClose(c);
    await this.#accepting;
    await Promise.allSettled([...this.#running]);
  }

  /**
   * Closes every connection open now, both sides (as a Service's endpoint change or an idle timeout would): a client
   * that kept its connections alive has to open new ones, which go to the next backends in turn. Returns how many
   * client connections it closed.
   */
  dropConnections(): number {
    const n = this.#open.size;
    for (const c of this.#open) quietClose(c);
    return n;
  }

  async #accept(): Promise<void> {
    while (!this.#closed) {
      let conn: Deno.Conn;
      try {
        conn = await this.#listener.accept();
      } catch {
        break;
      }
      const p = this.#forward(conn).finally(() => this.#running.delete(p));
      this.#running.add(p);
    }
  }

  async #forward(conn: Deno.Conn): Promise<void> {
    this.#open.add(conn);
    let back: Deno.Conn | undefined;
    const start = this.#next++;
    for (let i = 0; i < this.#backends.length && !back; i++) {
      const index = (start + i) % this.#backends.length;
      try {
        back = await Deno.connect({ hostname: "127.0.0.1", port: this.#backends[index] });
        this.connections[index]++;
      } catch { /* refused: the next backend */ }
    }
    if (!back) {
      this.dropped++;
      this.#open.delete(conn);
      quietClose(conn);
      return;
    }
    this.#open.add(back);
    const b = back;
    // The client's end of input is passed on (the answer may still come); the backend's end ends the exchange.
    void copy(conn, b).then((eof) => eof ? b.closeWrite().catch(() => quietClose(b)) : quietClose(b));
    await copy(b, conn);
    quietClose(conn);
    quietClose(b);
    this.#open.delete(conn);
    this.#open.delete(b);
  }
}

/** Copies until `from` ends (true) or either side fails (false). */
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

function quietClose(c: Deno.Conn): void {
  try {
    c.close();
  } catch { /* closed */ }
}

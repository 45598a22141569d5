// A loopback TCP proxy in front of a real apiserver that injects network faults: refuse, black-hole, stall, reset.
//
// TLS passes through untouched (the apiserver's certificate covers 127.0.0.1, whatever the port), so the hub talks to
// the real apiserver exactly as it would without the proxy, and every TCP connection it opens is counted.
//
// Modes, for connections accepted from now on:
// - "forward": bytes flow both ways to the target (a target that is down means the connection is closed at once);
// - "refuse": the listening socket is closed, so connecting fails with ECONNREFUSED (these attempts cannot be
//   counted here: use the hub's /status connectAttempts);
// - "blackhole": the connection is accepted and then nothing, ever (a firewall that drops packets);
// - "reset": the connection is accepted and closed at once (counted).
// `stall()` acts on the connections already open: they stop carrying bytes in either direction but stay open (the
// half-open case), while new connections follow the mode.
//
// Guarantees: `close()` closes the listener and every connection and settles once every task has ended, so a test
// that closes its proxy leaks no resource. Nothing listens on anything but 127.0.0.1.

/** What the proxy does with new connections. */
export type ProxyMode = "forward" | "refuse" | "blackhole" | "reset";

/** Options of {@linkcode FaultProxy.start}. */
export interface FaultProxyOptions {
  /** Port of the real server on 127.0.0.1. */
  targetPort: number;
  /** Port to listen on (default: one the OS picks; kept across "refuse" → "forward"). */
  port?: number;
  /** What to do with new connections at first. Default "forward". */
  mode?: ProxyMode;
}

interface Link {
  id: number;
  client: Deno.Conn;
  upstream?: Deno.Conn;
  stalled: boolean;
  closed: boolean;
  /** Resolves when the link is closed (a stalled pump waits on it). */
  done: Promise<void>;
  close(): void;
}

/** One TCP connection the proxy accepted. */
export interface ConnectionRecord {
  /** Its number, from 1 in accept order. */
  id: number;
  /** performance.now() at accept. */
  at: number;
  /** The mode it was accepted in. */
  mode: ProxyMode;
}

/** A fault-injecting TCP proxy on 127.0.0.1. */
export class FaultProxy {
  /** The port it listens on (127.0.0.1). */
  readonly port: number;
  /** The port of the real server it forwards to. */
  readonly targetPort: number;
  /** Every accepted connection, in order. */
  readonly connections: ConnectionRecord[] = [];
  #mode: ProxyMode;
  #listener: Deno.Listener | undefined;
  #acceptLoop: Promise<void> | undefined;
  readonly #links = new Set<Link>();
  readonly #tasks = new Set<Promise<void>>();
  #nextId = 1;
  #closed = false;

  private constructor(options: FaultProxyOptions, port: number) {
    this.targetPort = options.targetPort;
    this.port = port;
    this.#mode = options.mode ?? "forward";
  }

  /** Starts listening (unless the mode is "refuse", in which case the port is only reserved by number). */
  static start(options: FaultProxyOptions): FaultProxy {
    const listener = Deno.listen({ hostname: "127.0.0.1", port: options.port ?? 0 });
    const proxy = new FaultProxy(options, (listener.addr as Deno.NetAddr).port);
    if (proxy.#mode === "refuse") listener.close();
    else proxy.#listen(listener);
    return proxy;
  }

  /** https://127.0.0.1:<port>, for a kubeconfig. */
  get url(): string {
    return `https://127.0.0.1:${this.port}`;
  }

  /** What it does with new connections now. */
  get mode(): ProxyMode {
    return this.#mode;
  }

  /** Connections accepted so far. */
  get accepted(): number {
    return this.connections.length;
  }

  /** Connections accepted since `performance.now()` was `since`. */
  acceptedSince(since: number): number {
    return this.connections.filter((c) => c.at >= since).length;
  }

  /** Connections currently open (in any state). */
  get open(): number {
    return this.#links.size;
  }

  /** Changes what happens to new connections. */
  setMode(mode: ProxyMode): void {
    if (this.#closed) throw new Error("the proxy is closed");
    this.#mode = mode;
    if (mode === "refuse") {
      this.#listener?.close();
      this.#listener = undefined;
    } else if (!this.#listener) {
      this.#listen(Deno.listen({ hostname: "127.0.0.1", port: this.port }));
    }
  }

  /** Freezes every open connection: no byte moves either way, but the sockets stay open (half-open). */
  stall(): number {
    for (const link of this.#links) link.stalled = true;
    return this.#links.size;
  }

  /** Closes every open connection (the peer sees EOF or a reset). */
  dropAll(): number {
    const n = this.#links.size;
    for (const link of [...this.#links]) link.close();
    return n;
  }

  /** Closes the listener and every connection; settles when every task has ended. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#listener?.close();
    this.#listener = undefined;
    this.dropAll();
    while (this.#tasks.size > 0) await Promise.allSettled([...this.#tasks]);
  }

  /** {@linkcode close}, for `await using`. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  #track(p: Promise<void>): void {
    const t = p.catch(() => {}).finally(() => this.#tasks.delete(t));
    this.#tasks.add(t);
  }

  #listen(listener: Deno.Listener): void {
    this.#listener = listener;
    this.#track(this.#accept(listener));
  }

  async #accept(listener: Deno.Listener): Promise<void> {
    while (true) {
      let conn: Deno.Conn;
      try {
        conn = await listener.accept();
      } catch {
        return; // listener closed
      }
      if (this.#closed) {
        conn.close();
        return;
      }
      const mode = this.#mode;
      const id = this.#nextId++;
      this.connections.push({ id, at: performance.now(), mode });
      if (mode === "reset") {
        try {
          conn.close();
        } catch { /* gone */ }
        continue;
      }
      const link = this.#link(id, conn);
      if (mode === "blackhole") continue; // held open until dropAll/close
      this.#track(this.#forward(link));
    }
  }

  #link(id: number, client: Deno.Conn): Link {
    let resolveDone!: () => void;
    const done = new Promise<void>((r) => (resolveDone = r));
    const link: Link = {
      id,
      client,
      stalled: false,
      closed: false,
      done,
      close: () => {
        if (link.closed) return;
        link.closed = true;
        this.#links.delete(link);
        for (const c of [link.client, link.upstream]) {
          try {
            c?.close();
          } catch { /* already closed */ }
        }
        resolveDone();
      },
    };
    this.#links.add(link);
    return link;
  }

  async #forward(link: Link): Promise<void> {
    try {
      link.upstream = await Deno.connect({ hostname: "127.0.0.1", port: this.targetPort });
    } catch {
      link.close(); // the target is down: the client sees the connection closed at once
      return;
    }
    if (link.closed) {
      try {
        link.upstream.close();
      } catch { /* closed */ }
      return;
    }
    await Promise.all([this.#pump(link, link.client, link.upstream), this.#pump(link, link.upstream, link.client)]);
    link.close();
  }

  async #pump(link: Link, from: Deno.Conn, to: Deno.Conn): Promise<void> {
    const buf = new Uint8Array(64 * 1024);
    while (!link.closed) {
      if (link.stalled) return await link.done;
      let n: number | null;
      try {
        n = await from.read(buf);
      } catch {
        n = null;
      }
      if (n === null) {
        if (link.stalled) return await link.done;
        link.close();
        return;
      }
      if (link.stalled) return await link.done; // the bytes vanish, like on a dead path
      try {
        let off = 0;
        while (off < n) off += await to.write(buf.subarray(off, n));
      } catch {
        link.close();
        return;
      }
    }
  }
}

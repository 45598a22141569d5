// Long-lived requests (watches) of one client as streams of one HTTP/2 connection (node:http2), as client-go does.
//
// Why: on our HTTP/1.1 sockets every watch holds a TLS connection of its own, about 0.12 MiB of a Deno process each;
// a cluster watched for three kinds (the default operators) held three. A stream of a shared HTTP/2 connection costs a
// few KiB (`deno run -A bench/tools/cluster_watches_rss.ts`, docs/benchmarks.md "Transports"). Short requests (writes,
// lists) stay on the HTTP/1.1 sockets, which cost half the CPU per request of an HTTP/2 client and are closed once idle.
//
// Guarantees:
// - One session (connection) carries up to `maxStreams` streams; a session that received GOAWAY, errored or closed
//   takes no new stream (a new one is made), and its open streams run to their end.
// - A session with no stream left is closed `idleMs` later (an unref'd timer), so a client without watches holds no
//   connection; `close()` destroys every session and stream at once.
// - An abort closes the stream (RST_STREAM CANCEL) in any phase: a pending request rejects with the abort reason, a
//   body being read ends.
// - A body ends normally only on the server's END_STREAM; a stream reset, or a session lost, before it errors the read
//   (the watch then reconnects as on a closed socket).
// - The body is read with backpressure: the stream is paused while more than HIGH_WATER bytes wait unread.
// - A server that does not negotiate HTTP/2 (ALPN) makes the request reject with H2UnsupportedError, nothing sent.
// - A session whose TLS handshake does not complete within `handshakeTimeoutMs` is destroyed: its waiting requests
//   reject with an H2StreamError that says so, and the next request connects anew.

import * as http2 from "node:http2";
import { cancelStream, H2Response, H2StreamError } from "./_h2_response.ts";
import type { Abortable } from "./_http1_connection.ts";
import type { WireResponse } from "./_transport_interface.ts";

export { H2StreamError };

/** The server did not agree to HTTP/2: the caller sends the request another way. */
export class H2UnsupportedError extends Error {
  override name = "H2UnsupportedError";
}

export interface H2Options {
  /** `https://host:port`. */
  origin: string;
  caCerts?: string[];
  /** Client certificate and key, PEM. */
  cert?: string;
  key?: string;
  /** SNI and the certificate check use this name instead of the origin's host (kubeconfig tls-server-name). */
  serverName?: string;
  /** False only for insecure-skip-tls-verify. */
  rejectUnauthorized: boolean;
  /** A session with no stream is closed this long after its last one ended. Default 30 s. */
  idleMs?: number;
  /** Streams per session at most; more open another session. Default 100 (below any API server's limit). */
  maxStreams?: number;
  /** A session whose TLS handshake has not completed this long after the connect is destroyed. Default 10 s. */
  handshakeTimeoutMs?: number;
}

interface Session {
  s: http2.ClientHttp2Session;
  streams: number;
  /** Takes no new stream (GOAWAY, error, close, or the client retired it). */
  done: boolean;
  idle: ReturnType<typeof setTimeout> | undefined;
  /** Resolves once the session negotiated h2, rejects if it cannot. */
  ready: Promise<void>;
  /** Destroyed by this side (close(), or idle): node:http2 then ends its streams as if the server had. */
  killed: boolean;
  /** When a response head or body bytes last arrived on any of its streams (performance.now()). */
  lastFrame: number;
}

/** HTTP/2 sessions to one API server, carrying requests as streams. */
export class H2Streams {
  readonly #o: H2Options;
  readonly #sessions: Session[] = [];
  #closed = false;

  constructor(options: H2Options) {
    this.#o = options;
  }

  /** Sessions open now, for tests. */
  get sessions(): number {
    return this.#sessions.length;
  }

  /**
   * Whether a session still taking streams received a response head or body bytes within the last `ms`: the
   * connection is alive then, whatever one silent stream on it suggests (a half-open connection delivers nothing).
   */
  aliveWithin(ms: number): boolean {
    const since = performance.now() - ms;
    return this.#sessions.some((x) => !x.done && !x.s.destroyed && x.lastFrame >= since);
  }

  /**
   * Whether every session still taking streams is alive: it received a frame within the last `ms`, or answers a PING
   * within `timeoutMs`. False without such a session. A silent stream on a connection that is alive is just quiet.
   */
  async confirmAlive(ms: number, timeoutMs: number): Promise<boolean> {
    const since = performance.now() - ms;
    const live = this.#sessions.filter((x) => !x.done && !x.s.destroyed);
    if (!live.length) return false;
    const answers = await Promise.all(live.map((x) => x.lastFrame >= since || ping(x, timeoutMs)));
    return answers.every(Boolean);
  }

  /** Streams open now, for tests. */
  get streams(): number {
    let n = 0;
    for (const x of this.#sessions) n += x.streams;
    return n;
  }

  /**
   * Opens one stream (`body`, if any, sent whole) and resolves with its response head; `headers` are validated by the
   * caller (no CR or LF).
   */
  async request(
    method: string,
    target: string,
    headers: Record<string, string>,
    abort: Abortable,
    body?: Uint8Array,
  ): Promise<WireResponse> {
    if (this.#closed) throw new H2StreamError("the HTTP/2 client is closed");
    if (abort.aborted !== undefined) throw abort.aborted;
    const session = this.#pick();
    session.streams++;
    if (session.idle !== undefined) {
      clearTimeout(session.idle);
      session.idle = undefined;
    }
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      session.streams--;
      this.#maybeIdle(session);
    };
    try {
      await raceAbort(session.ready, abort);
    } catch (err) {
      release();
      throw err;
    }
    // Aborted after the session was ready and before the hook below (registered with no await between): no stream.
    if (abort.aborted !== undefined) {
      release();
      throw abort.aborted;
    }
    const h: http2.OutgoingHttpHeaders = { ":method": method, ":path": target };
    for (const name in headers) h[name.toLowerCase()] = headers[name];
    let stream: http2.ClientHttp2Stream;
    try {
      if (body) h["content-length"] = body.length;
      stream = session.s.request(h, { endStream: !body });
      if (body) stream.end(body);
    } catch (err) {
      // The session went away between ready and now.
      session.done = true;
      release();
      throw err;
    }
    stream.on("close", release);
    return await new Promise<WireResponse>((resolve, reject) => {
      let answered = false;
      abort.onAbort(() => {
        cancelStream(stream);
        if (!answered) {
          answered = true;
          reject(abort.aborted);
        }
      });
      stream.once("response", (head) => {
        session.lastFrame = performance.now();
        if (answered) return;
        answered = true;
        resolve(new H2Response(session, stream, head, abort));
      });
      const fail = (err: unknown) => {
        if (answered) return;
        answered = true;
        reject(abort.aborted ?? err);
      };
      stream.once("error", fail);
      // Every stream closes, most of them long after their answer: the error (and its stack) only for one that had none.
      stream.once("close", () => {
        if (!answered) fail(new H2StreamError("the stream closed before a response arrived"));
      });
    });
  }

  /** Destroys every session and its streams. */
  close(): void {
    this.#closed = true;
    for (const x of this.#sessions.splice(0)) {
      clearTimeout(x.idle);
      x.done = true;
      x.killed = true;
      x.s.destroy();
    }
  }

  /** A session with room for one more stream, connecting one if none has. */
  #pick(): Session {
    const max = this.#o.maxStreams ?? 100;
    for (const x of this.#sessions) {
      if (!x.done && !x.s.closed && !x.s.destroyed && x.streams < max) return x;
    }
    return this.#connect();
  }

  #connect(): Session {
    const { origin, caCerts, cert, key, serverName, rejectUnauthorized } = this.#o;
    const s = http2.connect(origin, {
      // An empty list keeps node:tls from loading the system store (that would need --allow-sys=ca).
      ca: caCerts ?? (rejectUnauthorized ? undefined : []),
      cert,
      key,
      servername: serverName,
      rejectUnauthorized,
    });
    const x: Session = {
      s,
      streams: 0,
      done: false,
      idle: undefined,
      ready: Promise.resolve(),
      killed: false,
      lastFrame: -Infinity,
    };
    // As client-go's TLSHandshakeTimeout: a server that accepts the connection and never completes the handshake would
    // otherwise hold every watch and read of the cluster until each one's own deadline.
    const handshakeMs = this.#o.handshakeTimeoutMs ?? 10_000;
    const handshake = setTimeout(() => {
      s.destroy(new H2StreamError(`the TLS handshake with ${origin} did not complete within ${handshakeMs} ms`));
    }, handshakeMs);
    Deno.unrefTimer(handshake as unknown as number);
    s.once("connect", () => clearTimeout(handshake));
    s.once("close", () => clearTimeout(handshake));
    x.ready = new Promise<void>((resolve, reject) => {
      s.once("connect", () => {
        if (s.alpnProtocol !== "h2") {
          reject(new H2UnsupportedError(`the server at ${origin} did not negotiate HTTP/2`));
          this.#drop(x);
          return;
        }
        resolve();
      });
      s.once("error", (err) => {
        // A server that speaks no HTTP/2 either picks http/1.1 (above) or refuses the handshake with this alert.
        reject(
          /NoApplicationProtocol|no_application_protocol/i.test(String((err as Error)?.message))
            ? new H2UnsupportedError(`the server at ${origin} did not negotiate HTTP/2`)
            : err,
        );
      });
      s.once("close", () => reject(new H2StreamError("the HTTP/2 connection closed before it was set up")));
    });
    x.ready.catch(() => {});
    s.on("error", () => this.#retire(x));
    s.on("goaway", () => this.#retire(x));
    s.on("close", () => this.#drop(x));
    this.#sessions.push(x);
    return x;
  }

  /** `x` takes no new stream; closed gracefully once its streams ended. */
  #retire(x: Session): void {
    x.done = true;
    this.#maybeIdle(x);
  }

  #drop(x: Session): void {
    x.done = true;
    clearTimeout(x.idle);
    x.idle = undefined;
    const i = this.#sessions.indexOf(x);
    if (i >= 0) this.#sessions.splice(i, 1);
    if (!x.s.destroyed) {
      x.killed = true;
      x.s.destroy();
    }
  }

  #maybeIdle(x: Session): void {
    if (x.streams > 0 || x.idle !== undefined) return;
    if (x.done) {
      this.#drop(x);
      return;
    }
    const timer = setTimeout(() => {
      x.idle = undefined;
      if (x.streams === 0) this.#drop(x);
    }, this.#o.idleMs ?? 30_000);
    Deno.unrefTimer(timer as unknown as number);
    x.idle = timer;
  }
}

/** True once `x` answers a PING within `timeoutMs` (which counts as a frame received), false otherwise. */
function ping(x: Session, timeoutMs: number): Promise<boolean> {
  return new Promise<boolean>((resolve) => {
    const timer = setTimeout(() => resolve(false), timeoutMs);
    Deno.unrefTimer(timer as unknown as number);
    try {
      x.s.ping((err) => {
        clearTimeout(timer);
        if (!err) x.lastFrame = performance.now();
        resolve(!err);
      });
    } catch {
      clearTimeout(timer);
      resolve(false);
    }
  });
}

/** Rejects with the abort reason as soon as `abort` fires. */
function raceAbort<T>(p: Promise<T>, abort: Abortable): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    abort.onAbort(() => reject(abort.aborted));
    p.then(resolve, reject);
  });
}

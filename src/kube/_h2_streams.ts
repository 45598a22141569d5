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

import * as http2 from "node:http2";
import { BodyLimitError, type ByteScratch, declaredOverLimit, GrowingBytes } from "./_body_limit.ts";
import type { Abortable } from "./_http1_connection.ts";
import type { WireResponse } from "./_transport.ts";

/** The server did not agree to HTTP/2: the caller sends the request another way. */
export class H2UnsupportedError extends Error {
  override name = "H2UnsupportedError";
}

/** A stream ended before the server ended its body (reset, or its connection lost). */
export class H2StreamError extends Error {
  override name = "H2StreamError";
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
}

/** Unread body bytes above which the stream is paused. */
const HIGH_WATER = 256 * 1024;

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
      stream.once("close", () => fail(new H2StreamError("the stream closed before a response arrived")));
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

/** Rejects with the abort reason as soon as `abort` fires. */
function raceAbort<T>(p: Promise<T>, abort: Abortable): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    abort.onAbort(() => reject(abort.aborted));
    p.then(resolve, reject);
  });
}

function cancelStream(stream: http2.ClientHttp2Stream): void {
  if (stream.closed || stream.destroyed) return;
  try {
    stream.close(http2.constants.NGHTTP2_CANCEL);
  } catch {
    stream.destroy();
  }
}

/** Why a body ended early. */
function lost(stream: http2.ClientHttp2Stream): H2StreamError {
  return new H2StreamError(
    stream.rstCode && stream.rstCode !== http2.constants.NGHTTP2_CANCEL
      ? `the server reset the stream (HTTP/2 error ${stream.rstCode}) before the response ended`
      : "the connection closed before the response ended",
  );
}

/** One stream's response: its head, and its body read with backpressure. */
class H2Response implements WireResponse {
  readonly status: number;
  readonly ok: boolean;
  readonly #stream: http2.ClientHttp2Stream;
  readonly #head: http2.IncomingHttpHeaders;
  readonly #abort: Abortable;
  readonly #queue: Uint8Array[] = [];
  #queued = 0;
  #ended = false;
  #error: unknown;
  #wake: (() => void) | undefined;

  constructor(
    session: Session,
    stream: http2.ClientHttp2Stream,
    head: http2.IncomingHttpHeaders,
    abort: Abortable,
  ) {
    this.#stream = stream;
    this.#head = head;
    this.#abort = abort;
    this.status = Number(head[":status"]);
    this.ok = this.status >= 200 && this.status < 300;
    stream.on("data", (chunk: Uint8Array) => {
      session.lastFrame = performance.now();
      this.#queue.push(chunk);
      this.#queued += chunk.length;
      if (this.#queued > HIGH_WATER) stream.pause();
      this.#notify();
    });
    stream.on("end", () => {
      // node:http2 also ends the readable side when the stream was reset (a lost connection resets it) or when this
      // side destroyed the session: only an end without either is the server's END_STREAM. (A session closing after
      // GOAWAY still delivers whole answers: the apiserver sends GOAWAY with the 401 of an unauthenticated request.)
      if (stream.rstCode || session.killed) this.#error ??= lost(stream);
      else this.#ended = true;
      this.#notify();
    });
    stream.on("error", (err) => {
      this.#error ??= err;
      this.#notify();
    });
    stream.on("close", () => {
      if (!this.#ended) this.#error ??= lost(stream);
      this.#notify();
    });
  }

  header(name: string): string | null {
    const v = this.#head[name.toLowerCase()];
    if (v === undefined) return null;
    return Array.isArray(v) ? v.join(", ") : String(v);
  }

  async text(maxBytes = Infinity, scratch?: ByteScratch): Promise<string> {
    const declared = Number.isFinite(maxBytes) ? declaredOverLimit(this.header("content-length"), maxBytes) : undefined;
    if (declared) {
      this.cancel();
      throw declared;
    }
    // As on our HTTP/1.1 sockets: gathered in one growing byte array (the client's scratch), decoded once.
    const length = Number(this.header("content-length"));
    const initial = Number.isSafeInteger(length) && length > 0 ? length : 16 * 1024;
    const acc = scratch?.take(maxBytes, initial) ?? new GrowingBytes(initial).reset(maxBytes);
    let refused = false;
    try {
      for await (const chunk of this.chunks()) {
        if (acc.length + chunk.length > maxBytes) {
          refused = true;
          throw new BodyLimitError("response body", maxBytes);
        }
        acc.push(chunk);
      }
      return acc.text();
    } catch (err) {
      this.cancel();
      throw err;
    } finally {
      scratch?.give(acc, refused);
    }
  }

  async *chunks(_transient?: boolean): AsyncGenerator<Uint8Array, void, undefined> {
    for (;;) {
      if (this.#abort.aborted !== undefined) return;
      const chunk = this.#queue.shift();
      if (chunk) {
        this.#queued -= chunk.length;
        if (this.#queued <= HIGH_WATER && this.#stream.isPaused()) this.#stream.resume();
        yield chunk;
        continue;
      }
      if (this.#ended) return;
      if (this.#error !== undefined) throw this.#error;
      await new Promise<void>((resolve) => this.#wake = resolve);
    }
  }

  async discard(): Promise<void> {
    for await (const _ of this.chunks()) { /* dropped */ }
  }

  cancel(): void {
    this.#queue.length = 0;
    this.#queued = 0;
    cancelStream(this.#stream);
  }

  #notify(): void {
    const wake = this.#wake;
    this.#wake = undefined;
    wake?.();
  }
}

// Per-cluster Kubernetes API client on Deno's fetch: JSON requests, paginated lists and NDJSON watch streams.

import { type Clock, type Logger, SystemClock } from "../util/mod.ts";
import { AuthCache } from "./_auth_cache.ts";
import { Call } from "./_call.ts";
import { ByteScratch } from "./_body_limit.ts";
import { NdjsonDecoder } from "./_ndjson.ts";
import { requestFailure } from "./_request_failure.ts";
import { type QueryValue, requestTarget } from "./_request_target.ts";
import { type FetchLike, makeTransport, type Transport, type WireResponse } from "./_transport.ts";
import { TransportPool } from "./_transport_pool.ts";
import type { ClusterAccess } from "./cluster_access.ts";
import { apiErrorFrom, TransportError } from "./errors.ts";
import { toWatchEvent, type WatchEvent } from "./watch_event.ts";

export type { WatchEvent, WatchEventType } from "./watch_event.ts";

export type { FetchLike } from "./_transport.ts";

export type { QueryValue } from "./_request_target.ts";

/** One finished request, for metrics. `code` is the HTTP status, or "error" when none arrived. */
export interface ResponseInfo {
  /** The request's HTTP method. */
  method: string;
  /** The HTTP status, or "error" when none arrived. */
  code: number | "error";
  /** From sending the request to its answer's headers (a watch) or body (anything else), ms. */
  durationMs: number;
}

/** How a KubeClient talks to its cluster; every field is optional. */
export interface KubeClientOptions {
  /**
   * Sends every request through this fetch. Default: the client's own HTTP/1.1 keep-alive sockets
   * (src/kube/_http1.ts) for writes, with watches and reads as streams of one HTTP/2 connection
   * (src/kube/_h2_streams.ts); Deno's fetch for --http2 and a proxy; node:https for insecure-skip-tls-verify.
   */
  fetch?: FetchLike;
  /** Time source, for tests on virtual time. Default the system clock. */
  clock?: Clock;
  /** Deadline for a non-watch request, body included; for a watch, until its headers arrive. Default 30 s. */
  requestTimeoutMs?: number;
  /** Default `uuid-operator-hub (deno)`. */
  userAgent?: string;
  /** Told of every finished request (for metrics); must not throw. */
  onResponse?(info: ResponseInfo): void;
  /** Receives one debug line per request (method, path, code, duration); never headers. */
  logger?: Logger;
  /** How long credentials from `access.auth()` are reused. Default 1 s. A 401 drops them at once. */
  authTtlMs?: number;
  /**
   * Send everything through Deno's fetch offering HTTP/2 (ALPN). Default false: measured on the local apiservers
   * (`deno task bench`), HTTP/1.1 on our own sockets costs the hub about half the CPU per status write, while the
   * watches are multiplexed anyway: by default every watch and read is a stream of the client's one HTTP/2 connection
   * (node:http2), so a cluster holds one connection whatever the number of watches.
   */
  http2?: boolean;
  /**
   * The largest response body or watch event the client holds, in bytes. Default DEFAULT_MAX_OBJECT_BYTES. A larger
   * one is refused with TooLargeError as soon as it is known to be larger (its Content-Length, else byte
   * `maxObjectBytes + 1`), and its connection closed: a server cannot make the client buffer more than this at once
   * per request. A list page counts whole, so a caller that meets TooLargeError on a page asks for a smaller one.
   */
  maxObjectBytes?: number;
}

/**
 * The default cap on one response body or watch event: 4 MiB.
 *
 * Why: etcd refuses writes over 1.5 MiB (`--max-request-bytes`), so no stored object is larger; its JSON on the wire
 * can be larger than what etcd holds (built-in objects are stored as protobuf, and a Secret's bytes become base64,
 * 4/3 as long: at most 2 MiB), plus the watch event's envelope. 4 MiB is twice that worst case, and a quarter of
 * client-go's 16 MiB per-frame cap in its streaming decoder (raised from 1 MiB in kubernetes#72053 for exactly this
 * protobuf-to-JSON growth). A list page of 500 objects fits as long as they average under 8 KiB.
 */
export const DEFAULT_MAX_OBJECT_BYTES = 4 * 1024 * 1024;

/**
 * The Accept header of a metadata-only list (client-go's metadata client, kube-rs's `list_metadata`): the server
 * answers a PartialObjectMetadataList (apiVersion meta.k8s.io/v1) whose items hold only `metadata`. The trailing
 * `application/json` lets a server without the feature answer the full list instead.
 */
export const PARTIAL_METADATA_LIST_ACCEPT = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1," +
  "application/json";
/** The Accept header of a metadata-only watch or get: each object is a PartialObjectMetadata (else the full one). */
export const PARTIAL_METADATA_ACCEPT = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json";

/** One request's options. */
export interface KubeRequestOptions {
  /** Query parameters; undefined values are left out. */
  query?: Record<string, QueryValue>;
  /** An object is sent as JSON; a string or bytes as they are. */
  body?: unknown;
  /** Default `application/merge-patch+json` for PATCH, `application/json` otherwise. */
  contentType?: string;
  /** Aborts the request; the call rejects with the signal's reason. */
  signal?: AbortSignal;
  /** This request's deadline, ms. Default the client's `requestTimeoutMs`. */
  timeoutMs?: number;
  /** A 2xx body is read and dropped, not parsed; the call resolves to undefined. Errors still parse. */
  discardBody?: boolean;
  /** The Accept header. Default `application/json`. */
  accept?: string;
}

/** One list page's options. */
export interface ListPageOptions {
  /** Default 500, like client-go's reflector. */
  limit?: number;
  /** The previous page's `continueToken`, for the next page. */
  continueToken?: string;
  /** Only objects with these labels, e.g. `app=web`. */
  labelSelector?: string;
  /** Only objects whose fields match, e.g. `metadata.name=x`. */
  fieldSelector?: string;
  /** Aborts the request. */
  signal?: AbortSignal;
  /**
   * Ask for a PartialObjectMetadataList (PARTIAL_METADATA_LIST_ACCEPT): items with only `metadata`, so no object's
   * data crosses the wire. A server that does not serve it may answer the full list; the page is read the same way.
   */
  metadataOnly?: boolean;
}

/** One page of a list. */
export interface ListPage<T = unknown> {
  /** The page's objects. */
  items: T[];
  /** The list's resourceVersion: where a watch continues from. */
  resourceVersion: string;
  /** Present when more pages follow. */
  continueToken?: string;
  /** How many objects the later pages hold, when the server says. */
  remainingItemCount?: number;
}

/** One watch's options. */
export interface WatchOptions {
  /** Where to start; omitted means "from now" with synthetic ADDED events for existing objects. */
  resourceVersion?: string;
  /** The server ends the stream after this many seconds. */
  timeoutSeconds: number;
  /** Default true. */
  allowWatchBookmarks?: boolean;
  /** Only objects with these labels, e.g. `app=web`. */
  labelSelector?: string;
  /** Only objects whose fields match, e.g. `metadata.name=x`. */
  fieldSelector?: string;
  /** Ends the watch: the generator returns without an error. */
  signal?: AbortSignal;
  /** Called once when the server accepted the watch (2xx headers), before the first event. */
  onOpen?: () => void;
  /** Each event's object as a PartialObjectMetadata (PARTIAL_METADATA_ACCEPT), or the full one from an older server. */
  metadataOnly?: boolean;
}

interface Opened {
  res: WireResponse;
  call: Call;
  transport: Transport;
}

/**
 * Talks to one cluster's API server.
 *
 * Guarantees:
 * - Every request carries fresh credentials (cached at most `authTtlMs`; a 401 drops them and
 *   calls `access.invalidate()` so an exec plugin runs again on the next request).
 * - The Deno.HttpClient is rebuilt only when the TLS material changes; the old one is closed
 *   once its last request finishes.
 * - A non-watch request never outlives `requestTimeoutMs`. A watch stream never outlives
 *   `timeoutSeconds` plus `requestTimeoutMs`, so a half-open connection cannot hang it forever.
 * - `close()` aborts every request in flight and closes every HTTP client, leaving no socket
 *   or timer behind.
 * - No response body and no watch event larger than `maxObjectBytes` is held: it is refused with TooLargeError
 *   and its connection closed.
 * - Errors are ApiError (the server answered non-2xx), TransportError (no answer), AuthError
 *   (no credentials), TooLargeError (an answer over `maxObjectBytes`), or the caller's own abort reason. None
 *   contains a header.
 */
export class KubeClient {
  /** The cluster this client talks to, and how it authenticates. */
  readonly access: ClusterAccess;
  readonly #clock: Clock;
  readonly #timeoutMs: number;
  readonly #onResponse: ((info: ResponseInfo) => void) | undefined;
  readonly #logger: Logger | undefined;
  readonly #maxBytes: number;
  /** The one spare buffer bodies and long watch lines are gathered in (see ByteScratch). */
  readonly #scratch = new ByteScratch();
  #closed = false;
  /** Requests in flight; close() aborts them (a Set is cheaper than one listener per request). */
  readonly #live = new Set<Call>();
  readonly #transports: TransportPool;
  readonly #auth: AuthCache;

  /** A client for `access`'s API server; no connection is made before the first request. */
  constructor(access: ClusterAccess, options: KubeClientOptions = {}) {
    this.access = access;
    this.#clock = options.clock ?? new SystemClock();
    this.#timeoutMs = options.requestTimeoutMs ?? 30_000;
    this.#onResponse = options.onResponse;
    this.#logger = options.logger;
    this.#maxBytes = options.maxObjectBytes ?? DEFAULT_MAX_OBJECT_BYTES;
    this.#auth = new AuthCache(access, this.#clock, options.authTtlMs ?? 1_000);
    const userAgent = options.userAgent ?? "uuid-operator-hub (deno)";
    const fetch = options.fetch;
    const http2 = options.http2 ?? false;
    this.#transports = new TransportPool((auth, fp) =>
      makeTransport(auth, fp, {
        server: access.server,
        userAgent,
        fetch,
        http2,
        proxyUrl: access.proxyUrl,
        tlsServerName: access.tlsServerName,
      })
    );
  }

  /** The context name this client talks to. */
  get cluster(): string {
    return this.access.name;
  }

  /** True once `close()` was called. */
  get closed(): boolean {
    return this.#closed;
  }

  /** Sends one request and returns the parsed JSON body (undefined for an empty body). */
  async request<T = unknown>(method: string, path: string, opts: KubeRequestOptions = {}): Promise<T> {
    const { res, call, transport } = await this.#open(method, path, opts);
    try {
      if (opts.discardBody && res.ok) {
        await call.race(res.discard());
        return undefined as T;
      }
      const text = await call.race(res.text(this.#maxBytes, this.#scratch));
      if (!res.ok) {
        throw apiErrorFrom({ method, path }, res.status, { body: text, retryAfter: res.header("retry-after") });
      }
      if (text.trim() === "") return undefined as T;
      try {
        return JSON.parse(text) as T;
      } catch (err) {
        throw new TransportError(`${method} ${path}: the response from ${this.access.server} is not JSON`, {
          cause: err,
        });
      }
    } catch (err) {
      this.#transports.suspect(call.why, transport);
      throw requestFailure(err, call, method, path, this.access);
    } finally {
      call.end();
      this.#transports.release(transport);
    }
  }

  /** One page of a list. A 410 on `continueToken` (expired) is an ApiError: list again from the start. */
  async listPage<T = unknown>(path: string, opts: ListPageOptions = {}): Promise<ListPage<T>> {
    const list = await this.request<
      { items?: T[] | null; metadata?: { resourceVersion?: string; continue?: string; remainingItemCount?: number } }
    >("GET", path, {
      query: {
        limit: opts.limit ?? 500,
        continue: opts.continueToken || undefined,
        labelSelector: opts.labelSelector,
        fieldSelector: opts.fieldSelector,
      },
      signal: opts.signal,
      ...(opts.metadataOnly ? { accept: PARTIAL_METADATA_LIST_ACCEPT } : {}),
    });
    const meta = list?.metadata ?? {};
    return {
      items: list?.items ?? [],
      resourceVersion: meta.resourceVersion ?? "",
      continueToken: meta.continue || undefined,
      remainingItemCount: meta.remainingItemCount,
    };
  }

  /**
   * Streams watch events.
   *
   * Guarantees: a non-2xx answer throws ApiError before any event (410 for a too-old
   * resourceVersion, unless the server reports it as an ERROR event instead); the iteration
   * ends when the server closes the stream, and ends quietly and promptly when `signal`
   * aborts or the consumer stops iterating, cancelling the body so the stream is released.
   * A broken, stalled or malformed stream throws TransportError.
   */
  // deno-lint-ignore no-explicit-any
  async *watch<T = any>(path: string, opts: WatchOptions): AsyncGenerator<WatchEvent<T>, void, undefined> {
    const query: Record<string, QueryValue> = {
      watch: "true",
      resourceVersion: opts.resourceVersion,
      timeoutSeconds: opts.timeoutSeconds,
      allowWatchBookmarks: (opts.allowWatchBookmarks ?? true) ? "true" : undefined,
      labelSelector: opts.labelSelector,
      fieldSelector: opts.fieldSelector,
    };
    let opened: Opened;
    try {
      const accept = opts.metadataOnly ? PARTIAL_METADATA_ACCEPT : undefined;
      opened = await this.#open("GET", path, { query, signal: opts.signal, accept }, true);
    } catch (err) {
      if (opts.signal?.aborted) return;
      throw err;
    }
    const { res, call, transport } = opened;
    const graceMs = this.#timeoutMs;
    call.arm(opts.timeoutSeconds * 1000 + graceMs, "deadline");
    let bodyDone = false;
    try {
      if (!res.ok) {
        const text = await call.race(res.text(this.#maxBytes, this.#scratch));
        bodyDone = true;
        throw apiErrorFrom({ method: "GET", path }, res.status, {
          body: text,
          retryAfter: res.header("retry-after"),
        });
      }
      opts.onOpen?.();
      const decoder = new NdjsonDecoder({ maxLineBytes: this.#maxBytes, scratch: this.#scratch });
      try {
        // Each chunk is used up (parsed, or copied into the decoder's buffer) before the next: views suffice.
        for await (const chunk of res.chunks(true)) {
          if (call.why === "caller") return;
          for (const v of decoder.push(chunk)) {
            yield toWatchEvent<T>(v, path);
            if (call.byCaller) return; // the consumer stopped while the event was out
          }
        }
      } catch (err) {
        if (call.why === "caller") return;
        throw err;
      }
      bodyDone = true;
      if (call.why === "caller") return;
      if (call.why) throw new DOMException(`watch ${call.why}`, "AbortError");
      for (const v of decoder.end()) yield toWatchEvent<T>(v, path);
    } catch (err) {
      if (call.why === "caller") return;
      this.#transports.suspect(call.why, transport);
      if (call.why === "deadline") {
        throw new TransportError(
          `GET ${path}: the watch stream from ${this.access.server} outlived timeoutSeconds=${opts.timeoutSeconds} by ${graceMs} ms; treating it as stalled`,
          { cause: err, timeout: true },
        );
      }
      throw requestFailure(err, call, "GET", path, this.access);
    } finally {
      if (!bodyDone) res.cancel();
      call.end();
      this.#transports.release(transport);
    }
  }

  /**
   * Aborts every request in flight and closes every HTTP client this client created.
   * Idempotent. Later requests fail with TransportError.
   */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    for (const call of [...this.#live]) call.close();
    this.#transports.close();
    this.#auth.clear();
  }

  /** Closes the client (see `close`), for `using`. */
  [Symbol.dispose](): void {
    this.close();
  }

  /**
   * Stops sending new requests over the connections opened so far: the next request opens a new
   * connection. Requests in flight finish (or time out) on the old ones, which are closed after.
   * The watcher calls this when its inactivity watchdog fires; the client does it by itself after
   * a request timed out, because a half-open connection (no FIN, no RST) stays in the pool forever
   * otherwise, and with HTTP/2 every later request would be multiplexed onto it.
   *
   * With `quietMs` (the watchdog's: a stream was silent that long), a cluster's watches share one HTTP/2 connection,
   * and another stream on it received anything within `quietMs`, the connection is alive and kept: one silent stream
   * is that stream's, and the watcher reopens it, so an idle cluster does not pay a new TLS connection per silent
   * watch. A half-open connection delivers nothing, so at most one more watchdog later it is replaced.
   */
  resetConnections(quietMs?: number): void {
    if (quietMs === undefined) this.#transports.reset();
    else this.#transports.resetUnlessAlive(quietMs);
  }

  // -------------------------------------------------------------------------------------------

  async #open(method: string, path: string, opts: KubeRequestOptions, watch = false): Promise<Opened> {
    if (this.closed) {
      throw new TransportError(`${method} ${path}: the client for cluster "${this.access.name}" is closed`);
    }
    const call = new Call(this.#clock, opts.signal, this.#live);
    call.arm(opts.timeoutMs ?? this.#timeoutMs, "timeout");
    const started = this.#clock.now();
    let transport: Transport | undefined;
    try {
      const creds = this.#auth.fresh() ?? await call.race(this.#auth.get());
      const auth = creds.auth;
      transport = this.#transports.acquire(auth, creds.fp);
      let body: string | Uint8Array | undefined;
      let contentType: string | undefined;
      if (opts.body !== undefined) {
        body = typeof opts.body === "string" || opts.body instanceof Uint8Array ? opts.body : JSON.stringify(opts.body);
        contentType = opts.contentType ?? (method === "PATCH" ? "application/merge-patch+json" : "application/json");
      }
      const target = requestTarget(path, opts.query);
      const res = await transport.send(method, target, auth.headers, contentType, body, call, opts.accept, watch);
      this.#report(method, path, res.status, started);
      if (res.status === 401) this.#auth.drop();
      if (watch) call.disarm(); // the caller arms the stream's own deadline
      return { res, call, transport };
    } catch (err) {
      call.end();
      if (transport) this.#transports.suspect(call.why, transport);
      if (transport) this.#transports.release(transport);
      const mapped = requestFailure(err, call, method, path, this.access);
      if (mapped instanceof TransportError) this.#report(method, path, "error", started);
      throw mapped;
    }
  }

  #report(method: string, path: string, code: number | "error", started: number): void {
    const durationMs = this.#clock.now() - started;
    try {
      this.#onResponse?.({ method, code, durationMs });
    } catch {
      // A metrics callback must not break requests.
    }
    // Checked first: building the fields object for every request costs even when debug is off.
    if (this.#logger?.enabled("debug")) {
      this.#logger.debug("kube request", { cluster: this.access.name, method, path, code, durationMs });
    }
  }
}

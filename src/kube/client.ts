// Per-cluster Kubernetes API client: JSON requests, paginated lists and NDJSON watch streams, over _transport.ts.

import { type Clock, type Logger, SystemClock } from "../util/mod.ts";
import { AuthCache } from "./config/_auth_cache.ts";
import { Call } from "./wire/_call.ts";
import { ByteScratch } from "./wire/_body_limit.ts";
import { NdjsonDecoder } from "./wire/_ndjson.ts";
import { requestFailure } from "./wire/_request_failure.ts";
import { type QueryValue, requestTarget } from "./wire/_request_target.ts";
import { makeTransport } from "./wire/_transport.ts";
import type { Transport, WireResponse } from "./wire/_transport_interface.ts";
import { TransportPool } from "./wire/_transport_pool.ts";
import type { ClusterAccess } from "./config/cluster_access.ts";
import { apiErrorFrom } from "./api_error_from.ts";
import { TransportError } from "./errors.ts";
import { toWatchEvent, type WatchEvent } from "./watch_event.ts";
import {
  DEFAULT_MAX_OBJECT_BYTES,
  type KubeClientOptions,
  type KubeRequestOptions,
  type ListPage,
  type ListPageOptions,
  PARTIAL_METADATA_ACCEPT,
  PARTIAL_METADATA_LIST_ACCEPT,
  type ResponseInfo,
  type WatchOptions,
} from "./client_options.ts";

export type { WatchEvent, WatchEventType } from "./watch_event.ts";

export type { FetchLike } from "./wire/_transport.ts";

export type { QueryValue } from "./wire/_request_target.ts";

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
 *
 * @example
 * ```ts
 * import { KubeClient, loadContexts, namespacePath } from "../../kube.ts";
 *
 * const [dev] = (await loadContexts({ files: ["clusters/local.yaml"] })).select(["dev"]);
 * using client = new KubeClient(dev, { requestTimeoutMs: 10_000 });
 * const ns = await client.request<{ metadata: { uid: string } }>("GET", namespacePath("default"));
 * console.log(client.cluster, ns.metadata.uid);
 * ```
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
        multiplex: options.multiplex ?? "auto",
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

  /**
   * Whether the HTTP/2 connection the watches share is alive: it received anything within the last `quietMs`, or
   * answers a PING within `timeoutMs` (client-go's ReadIdleTimeout and PingTimeout do the same). The watchdog asks
   * before reopening a silent watch: on a connection that is alive, the watch is just quiet and is kept. False where
   * each watch has a connection of its own (HTTP/1.1), or with no connection.
   */
  confirmAlive(quietMs: number, timeoutMs: number): Promise<boolean> {
    return this.#transports.confirmAlive(quietMs, timeoutMs);
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

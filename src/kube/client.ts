// Per-cluster Kubernetes API client on Deno's fetch: JSON requests, paginated lists and NDJSON watch streams.

import { type Clock, type Logger, SystemClock, type Timer } from "../util/mod.ts";
import { type Abortable, Http1Pool } from "./_http1.ts";
import { NdjsonDecoder, NdjsonError } from "./_ndjson.ts";
import { nodeHttpsTransport } from "./_node_https.ts";
import { ApiError, apiErrorFrom, AuthError, TransportError } from "./errors.ts";
import { type ClusterAccess, type ClusterAuth, tlsFingerprint } from "./kubeconfig.ts";

/** A fetch the client may be given instead of its own HTTP/1.1 sockets (tests do); `client` is the HttpClient. */
export type FetchLike = (url: string, init: RequestInit & { client?: Deno.HttpClient }) => Promise<Response>;

/** One finished request, for metrics. `code` is the HTTP status, or "error" when none arrived. */
export interface ResponseInfo {
  method: string;
  code: number | "error";
  durationMs: number;
}

export interface KubeClientOptions {
  /**
   * Sends every request through this fetch. Default: the client's own HTTP/1.1 keep-alive sockets
   * (src/kube/_http1.ts), or Deno's fetch for HTTP/2, a proxy, or insecure-skip-tls-verify.
   */
  fetch?: FetchLike;
  clock?: Clock;
  /** Deadline for a non-watch request, body included; for a watch, until its headers arrive. Default 30 s. */
  requestTimeoutMs?: number;
  /** Default `uuid-operator-hub (deno)`. */
  userAgent?: string;
  onResponse?(info: ResponseInfo): void;
  /** Receives one debug line per request (method, path, code, duration); never headers. */
  logger?: Logger;
  /** How long credentials from `access.auth()` are reused. Default 1 s. A 401 drops them at once. */
  authTtlMs?: number;
  /**
   * Offer HTTP/2 (ALPN, through Deno's fetch) instead of HTTP/1.1 keep-alive sockets. Default false:
   * measured on the local apiservers (`deno task bench`), HTTP/1.1 on our own sockets costs the hub
   * about half the CPU per status write, and a hub has one watch per cluster and resource, so
   * multiplexing saves nothing worth that.
   */
  http2?: boolean;
}

export type QueryValue = string | number | boolean | undefined;

export interface KubeRequestOptions {
  query?: Record<string, QueryValue>;
  /** An object is sent as JSON; a string or bytes as they are. */
  body?: unknown;
  /** Default `application/merge-patch+json` for PATCH, `application/json` otherwise. */
  contentType?: string;
  signal?: AbortSignal;
  timeoutMs?: number;
  /** A 2xx body is read and dropped, not parsed; the call resolves to undefined. Errors still parse. */
  discardBody?: boolean;
}

export interface ListPageOptions {
  /** Default 500, like client-go's reflector. */
  limit?: number;
  continueToken?: string;
  labelSelector?: string;
  fieldSelector?: string;
  signal?: AbortSignal;
}

export interface ListPage<T = unknown> {
  items: T[];
  /** The list's resourceVersion: where a watch continues from. */
  resourceVersion: string;
  /** Present when more pages follow. */
  continueToken?: string;
  remainingItemCount?: number;
}

export interface WatchOptions {
  /** Where to start; omitted means "from now" with synthetic ADDED events for existing objects. */
  resourceVersion?: string;
  /** The server ends the stream after this many seconds. */
  timeoutSeconds: number;
  /** Default true. */
  allowWatchBookmarks?: boolean;
  labelSelector?: string;
  fieldSelector?: string;
  signal?: AbortSignal;
  /** Called once when the server accepted the watch (2xx headers), before the first event. */
  onOpen?: () => void;
}

export type WatchEventType = "ADDED" | "MODIFIED" | "DELETED" | "BOOKMARK" | "ERROR";

/** One line of a watch stream. For ERROR, `object` is a metav1.Status (code 410 means relist). */
// deno-lint-ignore no-explicit-any
export interface WatchEvent<T = any> {
  type: WatchEventType;
  object: T;
}

const WATCH_TYPES = new Set<string>(["ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR"]);

/** A response as the client reads it, whichever transport carried it. The body is read once. */
interface WireResponse {
  readonly status: number;
  readonly ok: boolean;
  header(name: string): string | null;
  text(): Promise<string>;
  /** The body's bytes as they arrive; ends at the body's end, or early once the call is aborted. */
  chunks(): AsyncIterable<Uint8Array>;
  /** Reads the body to its end and drops it. */
  discard(): Promise<void>;
  cancel(): void;
}

/** One way to reach the server, built for one set of TLS material (`fp`). */
interface Transport {
  readonly fp: string;
  /** `auth` holds the credential headers (the same object for as long as credentials are cached). */
  send(
    method: string,
    target: string,
    auth: Record<string, string>,
    contentType: string | undefined,
    body: string | Uint8Array | undefined,
    call: Call,
  ): Promise<WireResponse>;
  close(): void;
  inflight: number;
  retired: boolean;
}

type AbortWhy = "caller" | "timeout" | "deadline" | "closed";

/** Credentials from `access.auth()` with their TLS digest and when they were fetched. */
interface Credentials {
  auth: ClusterAuth;
  fp: string;
  at: number;
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
 * - Errors are ApiError (the server answered non-2xx), TransportError (no answer), AuthError
 *   (no credentials), or the caller's own abort reason. None contains a header.
 */
export class KubeClient {
  readonly access: ClusterAccess;
  readonly #fetch: FetchLike | undefined;
  readonly #clock: Clock;
  readonly #timeoutMs: number;
  readonly #userAgent: string;
  readonly #onResponse: ((info: ResponseInfo) => void) | undefined;
  readonly #logger: Logger | undefined;
  readonly #authTtlMs: number;
  readonly #http2: boolean;
  #closed = false;
  /** Requests in flight; close() aborts them (a Set is cheaper than one listener per request). */
  readonly #live = new Set<Call>();
  #transport: Transport | undefined;
  readonly #retired = new Set<Transport>();
  #authCached: Credentials | undefined;
  #authPending: Promise<Credentials> | undefined;

  constructor(access: ClusterAccess, options: KubeClientOptions = {}) {
    this.access = access;
    this.#fetch = options.fetch;
    this.#clock = options.clock ?? new SystemClock();
    this.#timeoutMs = options.requestTimeoutMs ?? 30_000;
    this.#userAgent = options.userAgent ?? "uuid-operator-hub (deno)";
    this.#onResponse = options.onResponse;
    this.#logger = options.logger;
    this.#authTtlMs = options.authTtlMs ?? 1_000;
    this.#http2 = options.http2 ?? false;
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
      const text = await call.race(res.text());
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
      this.#suspect(call, transport);
      throw this.#failure(err, call, method, path);
    } finally {
      call.end();
      this.#release(transport);
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
      opened = await this.#open("GET", path, { query, signal: opts.signal }, true);
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
        const text = await call.race(res.text());
        bodyDone = true;
        throw apiErrorFrom({ method: "GET", path }, res.status, {
          body: text,
          retryAfter: res.header("retry-after"),
        });
      }
      opts.onOpen?.();
      const decoder = new NdjsonDecoder();
      try {
        for await (const chunk of res.chunks()) {
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
      this.#suspect(call, transport);
      if (call.why === "deadline") {
        throw new TransportError(
          `GET ${path}: the watch stream from ${this.access.server} outlived timeoutSeconds=${opts.timeoutSeconds} by ${graceMs} ms; treating it as stalled`,
          { cause: err, timeout: true },
        );
      }
      throw this.#failure(err, call, "GET", path);
    } finally {
      if (!bodyDone) res.cancel();
      call.end();
      this.#release(transport);
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
    for (const t of [this.#transport, ...this.#retired]) {
      if (t) closeQuietly(t);
    }
    this.#transport = undefined;
    this.#retired.clear();
    this.#authCached = undefined;
  }

  [Symbol.dispose](): void {
    this.close();
  }

  /**
   * Stops sending new requests over the connections opened so far: the next request opens a new
   * connection. Requests in flight finish (or time out) on the old ones, which are closed after.
   * The watcher calls this when its inactivity watchdog fires; the client does it by itself after
   * a request timed out, because a half-open connection (no FIN, no RST) stays in the pool forever
   * otherwise, and with HTTP/2 every later request would be multiplexed onto it.
   */
  resetConnections(): void {
    if (this.#transport) this.#retire(this.#transport);
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
      const creds = this.#freshAuth() ?? await call.race(this.#auth());
      const auth = creds.auth;
      transport = this.#transportFor(creds);
      transport.inflight++;
      let body: string | Uint8Array | undefined;
      let contentType: string | undefined;
      if (opts.body !== undefined) {
        body = typeof opts.body === "string" || opts.body instanceof Uint8Array ? opts.body : JSON.stringify(opts.body);
        contentType = opts.contentType ?? (method === "PATCH" ? "application/merge-patch+json" : "application/json");
      }
      const res = await transport.send(method, this.#target(path, opts.query), auth.headers, contentType, body, call);
      this.#report(method, path, res.status, started);
      if (res.status === 401) this.#dropAuth();
      if (watch) call.disarm(); // the caller arms the stream's own deadline
      return { res, call, transport };
    } catch (err) {
      call.end();
      if (transport) this.#suspect(call, transport);
      if (transport) this.#release(transport);
      const mapped = this.#failure(err, call, method, path);
      if (mapped instanceof TransportError) this.#report(method, path, "error", started);
      throw mapped;
    }
  }

  /** Turns whatever a request threw into the error the caller sees. */
  #failure(err: unknown, call: Call, method: string, path: string): unknown {
    if (err instanceof ApiError || err instanceof AuthError || err instanceof TransportError) return err;
    switch (call.why) {
      case "caller":
        return call.callerReason;
      case "closed":
        return new TransportError(
          `${method} ${path}: the client for cluster "${this.access.name}" was closed`,
          { cause: err },
        );
      case "timeout":
      case "deadline":
        return new TransportError(
          `${method} ${path}: no complete response from ${this.access.server} within ${call.armedMs} ms`,
          { cause: err, timeout: true },
        );
    }
    if (err instanceof NdjsonError) {
      return new TransportError(`${method} ${path}: malformed watch stream from ${this.access.server}`, {
        cause: err,
      });
    }
    return new TransportError(
      `${method} ${path}: cannot reach ${this.access.server}: ${innermostMessage(err)}`,
      { cause: err },
    );
  }

  /** The cached credentials while they are fresh: most requests need no await for them. */
  #freshAuth(): Credentials | undefined {
    const cached = this.#authCached;
    return cached && this.#clock.now() - cached.at < this.#authTtlMs ? cached : undefined;
  }

  #auth(): Promise<Credentials> {
    const cached = this.#freshAuth();
    if (cached) return Promise.resolve(cached);
    this.#authPending ??= this.access.auth().then((auth) => {
      const fresh = { auth, fp: tlsFingerprint(auth), at: this.#clock.now() };
      this.#authCached = fresh;
      return fresh;
    }).finally(() => {
      this.#authPending = undefined;
    });
    return this.#authPending;
  }

  #dropAuth(): void {
    this.#authCached = undefined;
    this.access.invalidate?.();
  }

  #transportFor({ auth, fp }: Credentials): Transport {
    if (this.#transport && this.#transport.fp === fp) return this.#transport;
    if (this.#transport) {
      const old = this.#transport;
      old.retired = true;
      if (old.inflight === 0) closeQuietly(old);
      else this.#retired.add(old);
    }
    this.#transport = this.#makeTransport(auth, fp);
    return this.#transport;
  }

  #makeTransport(auth: ClusterAuth, fp: string): Transport {
    const server = this.access.server;
    const userAgent = this.#userAgent;
    const fetchTransport = (doFetch: FetchLike, close: () => void, client?: Deno.HttpClient): Transport => ({
      fp,
      send: (method, target, authHeaders, contentType, body, call) =>
        doFetch(server + target, {
          method,
          headers: {
            Accept: "application/json",
            "User-Agent": userAgent,
            ...authHeaders,
            ...(contentType ? { "Content-Type": contentType } : {}),
          },
          body: body as BodyInit | undefined,
          signal: call.signal,
          redirect: "manual",
          client,
        })
          .then((res) => fromFetch(res, call)),
      close,
      inflight: 0,
      retired: false,
    });
    if (auth.insecureSkipTlsVerify) {
      const t = nodeHttpsTransport({
        caCerts: auth.caCerts,
        cert: auth.cert,
        key: auth.key,
        rejectUnauthorized: false,
      });
      return fetchTransport(t.fetch, t.close);
    }
    if (!this.#fetch && !this.#http2 && !this.access.proxyUrl && !proxyFromEnvironment()) {
      const url = new URL(server);
      const pool = new Http1Pool({
        origin: url.origin,
        caCerts: auth.caCerts?.length ? auth.caCerts : undefined,
        cert: auth.cert && auth.key ? auth.cert : undefined,
        key: auth.cert && auth.key ? auth.key : undefined,
      });
      const prefix = url.pathname.replace(/\/+$/, "");
      const fixed = headerLines({ Accept: "application/json", "User-Agent": userAgent });
      // Credential headers are validated and rendered once per credentials object, not per request.
      let authFor: Record<string, string> | undefined;
      let authLines = "";
      return {
        fp,
        send: async (method, target, authHeaders, contentType, body, call) => {
          if (authHeaders !== authFor) {
            authLines = headerLines(authHeaders);
            authFor = authHeaders;
          }
          // Http1Response already has the WireResponse shape: no wrapper per request.
          return await pool.request(
            method,
            prefix + target,
            fixed + authLines + (contentType ? contentTypeLine(contentType) : ""),
            typeof body === "string" ? ENCODER.encode(body) : body,
            call,
          );
        },
        close: () => pool.close(),
        inflight: 0,
        retired: false,
      };
    }
    const options: Deno.CreateHttpClientOptions & Partial<Deno.TlsCertifiedKeyPem> = {
      http1: true,
      http2: this.#http2,
    };
    if (auth.caCerts?.length) options.caCerts = auth.caCerts;
    if (auth.cert && auth.key) {
      options.cert = auth.cert;
      options.key = auth.key;
    }
    if (this.access.proxyUrl) options.proxy = { url: this.access.proxyUrl };
    const client = Deno.createHttpClient(options as Deno.CreateHttpClientOptions);
    return fetchTransport(this.#fetch ?? ((url, init) => fetch(url, init)), () => client.close(), client);
  }

  /** After a timeout, the connection the request used is presumed dead: retire its transport. */
  #suspect(call: Call, t: Transport): void {
    if ((call.why === "timeout" || call.why === "deadline") && t === this.#transport) this.#retire(t);
  }

  #retire(t: Transport): void {
    if (this.#transport === t) this.#transport = undefined;
    if (t.retired) return;
    t.retired = true;
    if (t.inflight <= 0) closeQuietly(t);
    else this.#retired.add(t);
  }

  #release(t: Transport): void {
    t.inflight--;
    if (t.retired && t.inflight <= 0 && this.#retired.delete(t)) closeQuietly(t);
  }

  /** The path and query of a request (the transport prepends the server). */
  #target(path: string, query?: Record<string, QueryValue>): string {
    let url = path.startsWith("/") ? path : `/${path}`;
    if (query) {
      const params = new URLSearchParams();
      for (const [k, v] of Object.entries(query)) {
        if (v !== undefined) params.set(k, String(v));
      }
      const qs = params.toString();
      if (qs) url += (url.includes("?") ? "&" : "?") + qs;
    }
    return url;
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

/** One request's cancellation: the caller's signal, the client's close, and a timer. */
class Call implements Abortable {
  /** Made only when a fetch transport asks for `signal`; our own sockets use the hooks. */
  #controller: AbortController | undefined;
  #reason: unknown;
  readonly #clock: Clock;
  readonly #caller: AbortSignal | undefined;
  readonly #live: Set<Call>;
  #why: AbortWhy | undefined;
  #timer: Timer | undefined;
  #armedWhy: AbortWhy = "timeout";
  /** Run once on abort: rejections of raced promises, socket closes (plain functions, no EventTarget). */
  #hooks: (() => void)[] | undefined;
  armedMs = 0;
  readonly #onCaller = () => this.#abort("caller");

  /** Registers itself in `live` (the client's requests in flight) until `end()`. */
  constructor(clock: Clock, caller: AbortSignal | undefined, live: Set<Call>) {
    this.#clock = clock;
    this.#caller = caller;
    this.#live = live;
    live.add(this);
    if (caller?.aborted) this.#abort("caller");
    else caller?.addEventListener("abort", this.#onCaller, { once: true });
  }

  get signal(): AbortSignal {
    if (!this.#controller) {
      this.#controller = new AbortController();
      if (this.#why) this.#controller.abort(this.#reason);
    }
    return this.#controller.signal;
  }

  /** Why the request was aborted, if it was. */
  get why(): AbortWhy | undefined {
    return this.#why;
  }

  /** Aborted by the caller's own signal (a read of `why` TypeScript does not narrow away). */
  get byCaller(): boolean {
    return this.#why === "caller";
  }

  /** The abort reason once aborted (Abortable). */
  get aborted(): unknown {
    return this.#why ? this.#reason : undefined;
  }

  onAbort(fn: () => void): void {
    if (!this.#why) (this.#hooks ??= []).push(fn);
  }

  get callerReason(): unknown {
    return this.#caller?.reason ?? new DOMException("The operation was aborted", "AbortError");
  }

  /** Aborts the request `ms` from now, replacing any earlier timer. */
  arm(ms: number, why: "timeout" | "deadline"): void {
    this.#timer?.cancel();
    this.armedMs = ms;
    this.#armedWhy = why;
    this.#timer = this.#clock.setTimer(ms, () => this.#abort(this.#armedWhy));
  }

  disarm(): void {
    this.#timer?.cancel();
    this.#timer = undefined;
  }

  /** The client closed: abort. */
  close(): void {
    this.#abort("closed");
  }

  /** Resolves like `p`, or rejects with the abort reason as soon as the call is aborted. */
  race<T>(p: Promise<T>): Promise<T> {
    if (this.#why) return Promise.reject(this.#reason);
    return new Promise<T>((resolve, reject) => {
      this.onAbort(() => reject(this.#reason));
      p.then(resolve, reject);
    });
  }

  /** Releases the timer and listeners. */
  end(): void {
    this.disarm();
    this.#caller?.removeEventListener("abort", this.#onCaller);
    this.#live.delete(this);
    this.#hooks = undefined;
  }

  #abort(why: AbortWhy): void {
    if (this.#why) return;
    this.#why = why;
    this.#reason = why === "caller" ? this.callerReason : new DOMException(`request ${why}`, "AbortError");
    this.#controller?.abort(this.#reason);
    const hooks = this.#hooks;
    this.#hooks = undefined;
    for (const fn of hooks ?? []) fn();
  }
}

const ENCODER = new TextEncoder();

/** A fetch Response as a WireResponse; an abort of the call cancels the body read. */
function fromFetch(res: Response, call: Call): WireResponse {
  return {
    status: res.status,
    ok: res.ok,
    header: (name) => res.headers.get(name),
    text: () => res.text(),
    discard: async () => void await res.arrayBuffer(),
    async *chunks() {
      if (!res.body) return;
      const reader = res.body.getReader();
      // Not every fetch ties the body to the signal: cancel the read ourselves on abort.
      call.onAbort(() => void reader.cancel().catch(() => {}));
      try {
        for (;;) {
          const { done, value } = await reader.read();
          if (done || call.why) return;
          yield value;
        }
      } finally {
        await reader.cancel().catch(() => {});
      }
    },
    cancel: () => {
      if (res.body && !res.bodyUsed && !res.body.locked) res.body.cancel().catch(() => {});
    },
  };
}

const CONTENT_TYPE_LINES = new Map<string, string>();

/** `Content-Type: …` as a header line, validated once per distinct value. */
function contentTypeLine(value: string): string {
  let line = CONTENT_TYPE_LINES.get(value);
  if (line === undefined) {
    line = headerLines({ "Content-Type": value });
    if (CONTENT_TYPE_LINES.size < 32) CONTENT_TYPE_LINES.set(value, line);
  }
  return line;
}

/** Request headers as HTTP/1.1 lines. A CR or LF inside a value (header injection) is refused. */
function headerLines(headers: Record<string, string>): string {
  let out = "";
  for (const name in headers) {
    const value = headers[name];
    if (/[\r\n]/.test(value) || /[\r\n:]/.test(name)) {
      // The message names the header, never its value (it may be a credential).
      throw new TransportError(
        `the request header ${JSON.stringify(name.replace(/[\r\n]/g, ""))} contains a line break`,
      );
    }
    out += `${name}: ${value}\r\n`;
  }
  return out;
}

/**
 * True when HTTPS_PROXY / HTTP_PROXY / ALL_PROXY is set: Deno's fetch honours them, our sockets do
 * not, so such processes keep using fetch. Unreadable (no --allow-env for them) reads as unset.
 */
function proxyFromEnvironment(): boolean {
  for (const name of ["HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"]) {
    try {
      if (Deno.env.get(name)) return true;
    } catch {
      // Not permitted: treated as unset.
    }
  }
  return false;
}

function toWatchEvent<T>(v: unknown, path: string): WatchEvent<T> {
  if (
    typeof v === "object" && v !== null && typeof (v as WatchEvent).type === "string" &&
    WATCH_TYPES.has((v as WatchEvent).type) && typeof (v as WatchEvent).object === "object"
  ) {
    return v as WatchEvent<T>;
  }
  throw new NdjsonError(`GET ${path}: a line of the watch stream is not a watch event`);
}

function innermostMessage(err: unknown): string {
  let cur: unknown = err;
  let msg = err instanceof Error ? err.message : String(err);
  for (let i = 0; i < 5 && cur instanceof Error; i++) {
    if (cur.message) msg = cur.message;
    cur = cur.cause;
  }
  return msg;
}

function closeQuietly(t: Transport): void {
  try {
    t.close();
  } catch {
    // Already closed.
  }
}

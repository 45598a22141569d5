// Per-cluster Kubernetes API client on Deno's fetch: JSON requests, paginated lists and NDJSON watch streams.

import { type Clock, type Logger, SystemClock, type Timer } from "../util/mod.ts";
import { NdjsonDecoder, NdjsonError } from "./_ndjson.ts";
import { nodeHttpsTransport } from "./_node_https.ts";
import { ApiError, apiErrorFrom, AuthError, TransportError } from "./errors.ts";
import { type ClusterAccess, type ClusterAuth, tlsFingerprint } from "./kubeconfig.ts";

/** The fetch signature the client calls; Deno's `fetch` by default. `client` is the cluster's HttpClient. */
export type FetchLike = (url: string, init: RequestInit & { client?: Deno.HttpClient }) => Promise<Response>;

/** One finished request, for metrics. `code` is the HTTP status, or "error" when none arrived. */
export interface ResponseInfo {
  method: string;
  code: number | "error";
  durationMs: number;
}

export interface KubeClientOptions {
  /** Defaults to the global `fetch`. */
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

interface Transport {
  readonly fp: string;
  fetch(url: string, init: RequestInit): Promise<Response>;
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
  res: Response;
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
  readonly #fetch: FetchLike;
  readonly #clock: Clock;
  readonly #timeoutMs: number;
  readonly #userAgent: string;
  readonly #onResponse: ((info: ResponseInfo) => void) | undefined;
  readonly #logger: Logger | undefined;
  readonly #authTtlMs: number;
  readonly #closing = new AbortController();
  #transport: Transport | undefined;
  readonly #retired = new Set<Transport>();
  #authCached: Credentials | undefined;
  #authPending: Promise<Credentials> | undefined;

  constructor(access: ClusterAccess, options: KubeClientOptions = {}) {
    this.access = access;
    this.#fetch = options.fetch ?? ((url, init) => fetch(url, init));
    this.#clock = options.clock ?? new SystemClock();
    this.#timeoutMs = options.requestTimeoutMs ?? 30_000;
    this.#userAgent = options.userAgent ?? "uuid-operator-hub (deno)";
    this.#onResponse = options.onResponse;
    this.#logger = options.logger;
    this.#authTtlMs = options.authTtlMs ?? 1_000;
  }

  /** The context name this client talks to. */
  get cluster(): string {
    return this.access.name;
  }

  /** True once `close()` was called. */
  get closed(): boolean {
    return this.#closing.signal.aborted;
  }

  /** Sends one request and returns the parsed JSON body (undefined for an empty body). */
  async request<T = unknown>(method: string, path: string, opts: KubeRequestOptions = {}): Promise<T> {
    const { res, call, transport } = await this.#open(method, path, opts);
    try {
      const text = await abortable(res.text(), call.signal);
      if (!res.ok) {
        throw apiErrorFrom({ method, path }, res.status, { body: text, retryAfter: res.headers.get("retry-after") });
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
    let reader: ReadableStreamDefaultReader<Uint8Array> | undefined;
    let onAbort: (() => void) | undefined;
    try {
      if (!res.ok) {
        const text = await abortable(res.text(), call.signal);
        throw apiErrorFrom({ method: "GET", path }, res.status, {
          body: text,
          retryAfter: res.headers.get("retry-after"),
        });
      }
      opts.onOpen?.();
      if (!res.body) return;
      const r = reader = res.body.getReader();
      // Not every fetch ties the body to the signal: cancel the read ourselves on abort.
      onAbort = () => void r.cancel().catch(() => {});
      call.signal.addEventListener("abort", onAbort, { once: true });
      const decoder = new NdjsonDecoder();
      for (;;) {
        let chunk: ReadableStreamReadResult<Uint8Array>;
        try {
          chunk = await reader.read();
        } catch (err) {
          if (call.why === "caller") return;
          throw err;
        }
        if (call.why === "caller") return;
        if (call.why) throw new DOMException(`watch ${call.why}`, "AbortError");
        const values = chunk.done ? decoder.end() : decoder.push(chunk.value);
        for (const v of values) {
          yield toWatchEvent<T>(v, path);
          if (call.why === "caller") return;
        }
        if (chunk.done) return;
      }
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
      if (onAbort) call.signal.removeEventListener("abort", onAbort);
      if (reader) await reader.cancel().catch(() => {});
      else if (res.body && !res.bodyUsed && !res.body.locked) await res.body.cancel().catch(() => {});
      call.end();
      this.#release(transport);
    }
  }

  /**
   * Aborts every request in flight and closes every HTTP client this client created.
   * Idempotent. Later requests fail with TransportError.
   */
  close(): void {
    if (this.closed) return;
    this.#closing.abort(new DOMException("client closed", "AbortError"));
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
    const call = new Call(this.#clock, opts.signal, this.#closing.signal);
    call.arm(opts.timeoutMs ?? this.#timeoutMs, "timeout");
    const started = this.#clock.now();
    let transport: Transport | undefined;
    try {
      const creds = await abortable(this.#auth(), call.signal);
      const auth = creds.auth;
      transport = this.#transportFor(creds);
      transport.inflight++;
      const headers: Record<string, string> = {
        Accept: "application/json",
        "User-Agent": this.#userAgent,
        ...auth.headers,
      };
      let body: BodyInit | undefined;
      if (opts.body !== undefined) {
        body = typeof opts.body === "string" || opts.body instanceof Uint8Array
          ? opts.body as BodyInit
          : JSON.stringify(opts.body);
        headers["Content-Type"] = opts.contentType ??
          (method === "PATCH" ? "application/merge-patch+json" : "application/json");
      }
      const res = await transport.fetch(this.#url(path, opts.query), {
        method,
        headers,
        body,
        signal: call.signal,
        redirect: "manual",
      });
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

  #auth(): Promise<Credentials> {
    const cached = this.#authCached;
    if (cached && this.#clock.now() - cached.at < this.#authTtlMs) return Promise.resolve(cached);
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
    if (auth.insecureSkipTlsVerify) {
      const t = nodeHttpsTransport({
        caCerts: auth.caCerts,
        cert: auth.cert,
        key: auth.key,
        rejectUnauthorized: false,
      });
      return { fp, fetch: t.fetch, close: t.close, inflight: 0, retired: false };
    }
    const options: Deno.CreateHttpClientOptions & Partial<Deno.TlsCertifiedKeyPem> = {};
    if (auth.caCerts?.length) options.caCerts = auth.caCerts;
    if (auth.cert && auth.key) {
      options.cert = auth.cert;
      options.key = auth.key;
    }
    if (this.access.proxyUrl) options.proxy = { url: this.access.proxyUrl };
    const client = Deno.createHttpClient(options as Deno.CreateHttpClientOptions);
    const doFetch = this.#fetch;
    return {
      fp,
      fetch: (url, init) => doFetch(url, { ...init, client }),
      close: () => client.close(),
      inflight: 0,
      retired: false,
    };
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

  #url(path: string, query?: Record<string, QueryValue>): string {
    let url = this.access.server + (path.startsWith("/") ? path : `/${path}`);
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
class Call {
  readonly #controller = new AbortController();
  readonly #clock: Clock;
  readonly #caller: AbortSignal | undefined;
  readonly #closing: AbortSignal;
  #why: AbortWhy | undefined;
  #timer: Timer | undefined;
  #armedWhy: AbortWhy = "timeout";
  armedMs = 0;
  readonly #onCaller = () => this.#abort("caller");
  readonly #onClosing = () => this.#abort("closed");

  constructor(clock: Clock, caller: AbortSignal | undefined, closing: AbortSignal) {
    this.#clock = clock;
    this.#caller = caller;
    this.#closing = closing;
    if (caller?.aborted) this.#abort("caller");
    else caller?.addEventListener("abort", this.#onCaller, { once: true });
    if (closing.aborted) this.#abort("closed");
    else closing.addEventListener("abort", this.#onClosing, { once: true });
  }

  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  /** Why the request was aborted, if it was. */
  get why(): AbortWhy | undefined {
    return this.#why;
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

  /** Releases the timer and listeners. */
  end(): void {
    this.disarm();
    this.#caller?.removeEventListener("abort", this.#onCaller);
    this.#closing.removeEventListener("abort", this.#onClosing);
  }

  #abort(why: AbortWhy): void {
    if (this.#why) return;
    this.#why = why;
    this.#controller.abort(why === "caller" ? this.callerReason : new DOMException(`request ${why}`, "AbortError"));
  }
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

/** Resolves like `p`, or rejects as soon as `signal` aborts. */
function abortable<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    p.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
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

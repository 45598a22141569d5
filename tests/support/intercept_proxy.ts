// An HTTPS proxy in front of a real apiserver that sees every request: to act at an exact moment (compact etcd right
// before a continued list, let a second writer win a race, hold or fail one object's status write, cut watch streams).
//
// It terminates TLS with the apiserver's own serving certificate and key, so the hub trusts it with the same CA, and
// forwards each request (headers, credentials and body untouched) to the real apiserver, streaming the answer back.
// Every response the hub gets comes from the real apiserver unless a hook answers itself.
//
// Guarantees: `close()` aborts every forwarded request and settles once the server has stopped; it binds 127.0.0.1
// only. Hooks run before forwarding; a hook that throws makes the proxy answer 502.

import type { FaultApiserver } from "../../dev/support/fault_cluster.ts";

/** What a hook sees of one request. */
export interface InterceptedRequest {
  method: string;
  /** Path without the query string. */
  path: string;
  query: URLSearchParams;
  /** The request body as text ("" when none). */
  body: string;
  /** The request's Accept header (null when none), e.g. a metadata-only list's PartialObjectMetadataList. */
  accept: string | null;
  /** Aborts when the client gave up on the request (for hooks that hold a request). */
  signal: AbortSignal;
}

/** A hook's answer: forward the request, or answer it with this response. */
export type HookResult = undefined | Response;

export type Hook = (req: InterceptedRequest) => HookResult | Promise<HookResult>;

/** One request as the proxy saw it. */
export interface InterceptRecord {
  method: string;
  path: string;
  query: string;
  /** performance.now() when it arrived. */
  at: number;
  /** Status sent back (0 while pending or when the client left first). */
  status: number;
  /** True when a hook answered instead of the apiserver. */
  synthetic: boolean;
  /** The ERROR events the apiserver sent inside this watch stream (their Status objects), in order. */
  errorEvents: WatchErrorEvent[];
}

/** The Status object of an ERROR event in a watch stream. */
export interface WatchErrorEvent {
  code?: number;
  reason?: string;
  message?: string;
}

/** Options of {@linkcode InterceptProxy.start}. */
export interface InterceptProxyOptions {
  /** The real apiserver, e.g. https://127.0.0.1:16446. */
  target: string;
  /** PEM to trust for the target (its serving certificate). */
  caPem: string;
  /** Certificate and key the proxy presents (the apiserver's own). */
  certPem: string;
  keyPem: string;
  hook?: Hook;
}

/** A request-level fault injector on 127.0.0.1. */
export class InterceptProxy {
  readonly port: number;
  readonly records: InterceptRecord[] = [];
  hook: Hook | undefined;
  /** Milliseconds to hold each piece of a watch stream on `path` before passing it on (a lagging watch); 0 for none. */
  streamDelayMs: (path: string) => number = () => 0;
  readonly #server: Deno.HttpServer;
  readonly #stop = new AbortController();
  readonly #client: Deno.HttpClient;
  readonly #target: string;
  /** Streaming responses in flight (watches), each with its record. */
  readonly #streams = new Map<AbortController, InterceptRecord>();

  private constructor(options: InterceptProxyOptions, port: number, server: Deno.HttpServer, client: Deno.HttpClient) {
    this.port = port;
    this.#server = server;
    this.#client = client;
    this.#target = options.target;
    this.hook = options.hook;
  }

  /** A proxy in front of a private fault apiserver, presenting that apiserver's own certificate. */
  static async inFrontOf(f: FaultApiserver): Promise<InterceptProxy> {
    return InterceptProxy.start({
      target: f.url,
      caPem: f.caPem,
      certPem: f.caPem,
      keyPem: await Deno.readTextFile(f.keyFile),
    });
  }

  static start(options: InterceptProxyOptions): InterceptProxy {
    const client = Deno.createHttpClient({ caCerts: [options.caPem] });
    const holder: { proxy?: InterceptProxy } = {};
    const stop = new AbortController();
    const server = Deno.serve({
      hostname: "127.0.0.1",
      port: 0,
      cert: options.certPem,
      key: options.keyPem,
      signal: stop.signal,
      onListen: () => {},
    }, (req) => holder.proxy!.#handle(req));
    const proxy = new InterceptProxy(options, (server.addr as Deno.NetAddr).port, server, client);
    holder.proxy = proxy;
    // One stop signal for the server and the proxy.
    proxy.#stop.signal.addEventListener("abort", () => stop.abort(), { once: true });
    return proxy;
  }

  get url(): string {
    return `https://127.0.0.1:${this.port}`;
  }

  /** Requests seen matching `filter`. */
  seen(filter: (r: InterceptRecord) => boolean = () => true): InterceptRecord[] {
    return this.records.filter(filter);
  }

  /** The watches streaming through now (their records), oldest first. */
  openStreams(): InterceptRecord[] {
    return [...this.#streams.values()];
  }

  /** Ends every streaming response in flight (watches): the client sees its stream end. */
  cutStreams(): number {
    const n = this.#streams.size;
    for (const c of this.#streams.keys()) c.abort();
    this.#streams.clear();
    return n;
  }

  async close(): Promise<void> {
    this.cutStreams();
    this.#stop.abort();
    await this.#server.finished.catch(() => {});
    this.#client.close();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  async #handle(req: Request): Promise<Response> {
    const url = new URL(req.url);
    const body = req.body ? await req.text() : "";
    const record: InterceptRecord = {
      method: req.method,
      path: url.pathname,
      query: url.search,
      at: performance.now(),
      status: 0,
      synthetic: false,
      errorEvents: [],
    };
    this.records.push(record);
    try {
      const hooked = await this.hook?.({
        method: req.method,
        path: url.pathname,
        query: url.searchParams,
        body,
        accept: req.headers.get("accept"),
        signal: req.signal,
      });
      if (hooked) {
        record.status = hooked.status;
        record.synthetic = true;
        return hooked;
      }
    } catch (err) {
      record.status = 502;
      record.synthetic = true;
      return new Response(`intercept hook failed: ${(err as Error).message}`, { status: 502 });
    }
    const headers = new Headers(req.headers);
    headers.delete("host");
    headers.delete("content-length");
    headers.delete("accept-encoding"); // keep the body plain so it streams through unchanged
    const stream = new AbortController();
    const isWatch = url.searchParams.get("watch") === "true" || url.searchParams.get("watch") === "1";
    try {
      const res = await fetch(this.#target + url.pathname + url.search, {
        method: req.method,
        headers,
        body: body === "" ? undefined : body,
        client: this.#client,
        signal: stream.signal,
        redirect: "manual",
      });
      record.status = res.status;
      const outHeaders = new Headers(res.headers);
      outHeaders.delete("content-length");
      outHeaders.delete("content-encoding");
      outHeaders.delete("transfer-encoding");
      if (!isWatch || !res.body) {
        const bytes = new Uint8Array(await res.arrayBuffer());
        return new Response(bytes, { status: res.status, headers: outHeaders });
      }
      this.#streams.set(stream, record);
      const upstream = res.body;
      const streams = this.#streams;
      const delayOf = (path: string) => this.streamDelayMs(path);
      const piped = new ReadableStream<Uint8Array>({
        async start(controller) {
          const reader = upstream.getReader();
          const onCut = () => void reader.cancel().catch(() => {});
          stream.signal.addEventListener("abort", onCut, { once: true });
          const decoder = new TextDecoder();
          let line = "";
          try {
            while (true) {
              const { done, value } = await reader.read();
              if (done) break;
              const delay = delayOf(url.pathname);
              if (delay > 0) await new Promise((r) => setTimeout(r, delay));
              controller.enqueue(value);
              line = noteErrorEvents(line + decoder.decode(value, { stream: true }), record.errorEvents);
            }
          } catch { /* cut or broken */ }
          stream.signal.removeEventListener("abort", onCut);
          streams.delete(stream);
          try {
            controller.close();
          } catch { /* client gone */ }
        },
        cancel() {
          stream.abort();
          streams.delete(stream);
        },
      });
      return new Response(piped, { status: res.status, headers: outHeaders });
    } catch (err) {
      record.status = 502;
      return new Response(`intercept proxy: upstream failed: ${(err as Error).message}`, { status: 502 });
    }
  }
}

/** A JSON response like the apiserver's error Status, for hooks that answer themselves. */
export function statusResponse(code: number, reason: string, message: string): Response {
  return new Response(
    JSON.stringify({ kind: "Status", apiVersion: "v1", metadata: {}, status: "Failure", message, reason, code }),
    { status: code, headers: { "content-type": "application/json" } },
  );
}

/**
 * Parses the complete lines of watch-stream text, appends the Status of each ERROR event to `out`, and returns the
 * incomplete tail. Only lines that mention ERROR are parsed, so a stream of thousands of events costs little.
 */
function noteErrorEvents(text: string, out: WatchErrorEvent[]): string {
  const lines = text.split("\n");
  const tail = lines.pop()!;
  for (const line of lines) {
    if (!line.includes('"ERROR"')) continue;
    try {
      const ev = JSON.parse(line);
      if (ev?.type === "ERROR") {
        out.push({ code: ev.object?.code, reason: ev.object?.reason, message: ev.object?.message });
      }
    } catch { /* not a JSON line: the stream is checked by its reader, not here */ }
  }
  return tail;
}

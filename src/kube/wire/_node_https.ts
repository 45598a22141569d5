// A fetch-shaped transport on node:https, used only for clusters with insecure-skip-tls-verify.

import https from "node:https";
import type { IncomingMessage } from "node:http";

/** Fetch over one keep-alive node:https Agent; `close()` destroys its sockets. */
export interface NodeHttpsTransport {
  fetch(url: string, init: RequestInit): Promise<Response>;
  close(): void;
}

/**
 * Deno.createHttpClient cannot skip certificate verification per client (only the process-wide
 * --unsafely-ignore-certificate-errors flag can), while node:https honours
 * `rejectUnauthorized: false`. This adapter gives such clusters the same Response/stream shape.
 *
 * Guarantees: the body is a byte stream with backpressure (the socket is paused while the
 * stream's queue is full); aborting `init.signal` or cancelling the body destroys the request;
 * a connection that closes before the response ends errors the body instead of ending it.
 * Assumptions: HTTP/1.1 only, which is enough for list, watch and patch.
 */
export function nodeHttpsTransport(
  tls: { caCerts?: string[]; cert?: string; key?: string; rejectUnauthorized: boolean },
): NodeHttpsTransport {
  const agent = new https.Agent({
    keepAlive: true,
    rejectUnauthorized: tls.rejectUnauthorized,
    // Unverified, no authority matters; an empty list keeps node:tls from loading the system store, which would need
    // --allow-sys=ca (not among the run task's and the compiled binary's permissions).
    ca: tls.caCerts ?? (tls.rejectUnauthorized ? undefined : []),
    cert: tls.cert,
    key: tls.key,
  });
  return {
    fetch: (url, init) => request(agent, url, init),
    close: () => agent.destroy(),
  };
}

function request(agent: https.Agent, url: string, init: RequestInit): Promise<Response> {
  return new Promise((resolve, reject) => {
    const signal = init.signal ?? undefined;
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const headers: Record<string, string> = {};
    new Headers(init.headers).forEach((v, k) => headers[k] = v);
    let settled = false;
    let current: IncomingMessage | undefined;
    const req = https.request(url, { method: init.method ?? "GET", headers, agent }, (res) => {
      settled = true;
      current = res;
      resolve(toResponse(res, () => cleanup()));
    });
    const onAbort = () => {
      const reason = signal?.reason ?? new DOMException("The request was aborted", "AbortError");
      req.destroy(reason instanceof Error ? reason : new DOMException(String(reason), "AbortError"));
      current?.destroy(reason instanceof Error ? reason : undefined);
      if (!settled) {
        settled = true;
        reject(reason);
      }
    };
    const cleanup = () => signal?.removeEventListener("abort", onAbort);
    signal?.addEventListener("abort", onAbort, { once: true });
    req.on("error", (err) => {
      if (!settled) {
        settled = true;
        cleanup();
        reject(err);
      }
    });
    const body = init.body;
    if (typeof body === "string" || body instanceof Uint8Array) req.write(body);
    req.end();
  });
}

function toResponse(res: IncomingMessage, done: () => void): Response {
  const status = res.statusCode ?? 502;
  const headers = new Headers();
  for (const [k, v] of Object.entries(res.headers)) {
    if (v !== undefined) headers.set(k, Array.isArray(v) ? v.join(", ") : v);
  }
  if (status === 204 || status === 205 || status === 304) {
    res.resume();
    res.once("end", done);
    return new Response(null, { status, headers });
  }
  let finished = false;
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      res.on("data", (chunk: Uint8Array) => {
        // Data already buffered when the body was cancelled still arrives: enqueueing it would throw (uncaught).
        if (finished) return;
        controller.enqueue(new Uint8Array(chunk));
        if ((controller.desiredSize ?? 1) <= 0) res.pause();
      });
      res.once("end", () => {
        if (finished) return;
        finished = true;
        done();
        controller.close();
      });
      res.once("error", (err) => {
        if (finished) return;
        finished = true;
        done();
        controller.error(err);
      });
      res.once("close", () => {
        if (finished) return;
        finished = true;
        done();
        controller.error(new Error("connection closed before the response ended"));
      });
    },
    pull() {
      res.resume();
    },
    cancel() {
      finished = true;
      done();
      res.destroy();
    },
  }, { highWaterMark: 8 });
  return new Response(body, { status, headers });
}

// How a KubeClient reaches its server: our own HTTP/1.1 keep-alive sockets, Deno's fetch (HTTP/2, proxies) or node:https
// (insecure-skip-tls-verify), behind one small interface (_transport_interface.ts).

import { declaredOverLimit, limitedText } from "./_body_limit.ts";
import { h2For, type Multiplex, multiplexRoute, withH2 } from "./_h2_transport.ts";
import { Http1Pool } from "./_http1.ts";
import type { Call } from "./_call.ts";
import { headerCheck, headerLines } from "./_header_lines.ts";
import type { NodeHttpsTransport } from "./_node_https.ts";
import type { ClusterAuth } from "../config/cluster_access.ts";
import { TransportError } from "../errors.ts";
import type { Transport, WireResponse } from "./_transport_interface.ts";

/**
 * A fetch the client may be given instead of its own HTTP/1.1 sockets (tests do); `client` is the HttpClient.
 *
 * @example
 * ```ts
 * import { type ClusterAccess, type FetchLike, KubeClient } from "../../../kube.ts";
 *
 * declare const access: ClusterAccess;
 * const sent: string[] = [];
 * const recording: FetchLike = (url, init) => {
 *   sent.push(`${init.method ?? "GET"} ${url}`);
 *   return fetch(url, init);
 * };
 * const client = new KubeClient(access, { fetch: recording });
 * ```
 */
export type FetchLike = (url: string, init: RequestInit & { client?: Deno.HttpClient }) => Promise<Response>;

/** What every transport of one client shares. */
export interface TransportOptions {
  /** API server base URL without a trailing slash. */
  server: string;
  userAgent: string;
  /** Use this fetch instead of our sockets (tests). */
  fetch?: FetchLike;
  /** Offer HTTP/2 through Deno's fetch. */
  http2: boolean;
  /** The kubeconfig's proxy-url, if any (Deno's fetch honours it). */
  proxyUrl?: string;
  /** The kubeconfig's tls-server-name, if any: honoured by our own HTTP/1.1 sockets only. */
  tlsServerName?: string;
  /** Watches and reads as streams of one HTTP/2 connection: always, never, or "auto" (the default). */
  multiplex?: Multiplex;
}

/**
 * Builds the transport for one set of TLS material (`fp` is its digest).
 *
 * Guarantees: insecure-skip-tls-verify goes through node:https (Deno's fetch cannot skip verification per client);
 * our own HTTP/1.1 sockets serve everything else unless a fetch is injected, HTTP/2 is asked for, or a proxy is
 * configured (kubeconfig proxy-url or an HTTPS_PROXY-style variable), which Deno's fetch handles. A tls-server-name is
 * honoured on our own sockets with token credentials (SNI and the certificate check use it); with a client certificate,
 * HTTP/2 or a proxy every request fails with a TransportError naming the conflict, and nothing is sent.
 *
 * On our own sockets and on insecure-skip-tls-verify, watches, reads and pre-flight's reviews are streams of one HTTP/2
 * connection per transport (node:http2, src/kube/wire/_h2_streams.ts), so a cluster that only watches holds one connection
 * whatever the number of watches; writes keep the HTTP/1.1 pool.
 * The same TLS material and server name apply. All stays on HTTP/1.1 for a plain-http server, a kubeconfig without a
 * CA (node:tls would need --allow-sys=ca for the system store), or a server that does not negotiate HTTP/2.
 */
export function makeTransport(auth: ClusterAuth, fp: string, o: TransportOptions): Transport {
  const { server, userAgent } = o;
  const fetchTransport = (doFetch: FetchLike, close: () => void, client?: Deno.HttpClient): Transport => ({
    fp,
    send: (method, target, authHeaders, contentType, body, call, accept) =>
      doFetch(server + target, {
        method,
        headers: {
          Accept: accept ?? "application/json",
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
    // node:https (about 3 MB once imported) loads on the first request of such a cluster, not at start.
    let node: Promise<NodeHttpsTransport> | undefined;
    const t = () =>
      node ??= import("./_node_https.ts").then((m) =>
        m.nodeHttpsTransport({ caCerts: auth.caCerts, cert: auth.cert, key: auth.key, rejectUnauthorized: false })
      );
    const base = fetchTransport(
      (url, init) => t().then((n) => n.fetch(url, init)),
      () => void node?.then((n) => n.close(), () => {}),
    );
    const h2 = o.multiplex === false ? undefined : h2For(server, auth, undefined, false);
    return h2
      ? withH2(
        base,
        h2,
        new URL(server).pathname.replace(/\/+$/, ""),
        userAgent,
        headerCheck(),
        multiplexRoute(o.multiplex ?? "auto"),
      )
      : base;
  }
  const ownSockets = !o.fetch && !o.http2 && !o.proxyUrl && !proxyFromEnvironment();
  if (o.tlsServerName && (!ownSockets || (auth.cert && auth.key))) {
    // Deno's fetch and Deno.connectTls take no server name; only a plain TCP connect plus startTls does.
    const why = ownSockets ? "a client certificate" : "--http2, a proxy-url or an HTTPS_PROXY-style variable";
    return refusing(
      fp,
      `tls-server-name "${o.tlsServerName}" cannot be honoured together with ${why}: the hub checks a server name ` +
        `other than the URL's host on its own HTTP/1.1 connections with token credentials only; remove one`,
    );
  }
  if (ownSockets) {
    const url = new URL(server);
    const pool = new Http1Pool({
      origin: url.origin,
      serverName: o.tlsServerName,
      caCerts: auth.caCerts?.length ? auth.caCerts : undefined,
      cert: auth.cert && auth.key ? auth.cert : undefined,
      key: auth.cert && auth.key ? auth.key : undefined,
    });
    const prefix = url.pathname.replace(/\/+$/, "");
    const fixed = headerLines({ Accept: "application/json", "User-Agent": userAgent });
    // Other Accept values (metadata-only lists and watches): their fixed lines, validated once per distinct value.
    const fixedFor = new Map<string, string>();
    const lines = headerCheck();
    const http1: Transport = {
      fp,
      // async: a refused header rejects the promise, as every transport's send does, instead of throwing.
      send: async (method, target, authHeaders, contentType, body, call, accept) => {
        let head = fixed;
        if (accept !== undefined && accept !== "application/json") {
          head = fixedFor.get(accept) ?? "";
          if (!head) {
            head = headerLines({ Accept: accept, "User-Agent": userAgent });
            if (fixedFor.size < 8) fixedFor.set(accept, head);
          }
        }
        // Http1Response already has the WireResponse shape: no wrapper per request.
        return await pool.request(
          method,
          prefix + target,
          head + lines.auth(authHeaders) + (contentType ? lines.contentType(contentType) : ""),
          typeof body === "string" ? ENCODER.encode(body) : body,
          call,
        );
      },
      close: () => pool.close(),
      inflight: 0,
      retired: false,
    };
    const h2 = o.multiplex === false ? undefined : h2For(server, auth, o.tlsServerName, true);
    return h2 ? withH2(http1, h2, prefix, userAgent, lines, multiplexRoute(o.multiplex ?? "auto")) : http1;
  }
  const options: Deno.CreateHttpClientOptions & Partial<Deno.TlsCertifiedKeyPem> = {
    http1: true,
    http2: o.http2,
  };
  if (auth.caCerts?.length) options.caCerts = auth.caCerts;
  if (auth.cert && auth.key) {
    options.cert = auth.cert;
    options.key = auth.key;
  }
  if (o.proxyUrl) options.proxy = { url: o.proxyUrl };
  const client = Deno.createHttpClient(options as Deno.CreateHttpClientOptions);
  return fetchTransport(o.fetch ?? ((url, init) => fetch(url, init)), () => client.close(), client);
}

const ENCODER = new TextEncoder();

/** A transport that sends nothing and fails every request with `message` (a TLS setting it cannot honour). */
function refusing(fp: string, message: string): Transport {
  return {
    fp,
    send: () => Promise.reject(new TransportError(message)),
    close: () => {},
    inflight: 0,
    retired: false,
  };
}

/** A fetch Response as a WireResponse; an abort of the call cancels the body read. */
function fromFetch(res: Response, call: Call): WireResponse {
  return {
    status: res.status,
    ok: res.ok,
    header: (name) => res.headers.get(name),
    text: async (maxBytes = Infinity) => {
      if (!Number.isFinite(maxBytes)) return await res.text();
      const declared = declaredOverLimit(res.headers.get("content-length"), maxBytes);
      if (declared) {
        if (res.body && !res.bodyUsed && !res.body.locked) res.body.cancel().catch(() => {});
        throw declared;
      }
      if (!res.body) return "";
      const reader = res.body.getReader();
      call.onAbort(() => void reader.cancel().catch(() => {}));
      try {
        return await limitedText(readAll(reader), maxBytes);
      } finally {
        await reader.cancel().catch(() => {});
      }
    },
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

/** A body reader's chunks until its end. */
async function* readAll(reader: ReadableStreamDefaultReader<Uint8Array>): AsyncGenerator<Uint8Array, void, undefined> {
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return;
    yield value;
  }
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

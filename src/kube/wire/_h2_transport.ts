// A transport's watches, reads and reviews as streams of one HTTP/2 connection, its writes on the transport it wraps;
// and when that pays ("auto": once the process holds more than MULTIPLEX_FROM clusters' transports).

import type { Call } from "./_call.ts";
import type { H2Streams } from "./_h2_streams.ts";
import type { HeaderCheck } from "./_header_lines.ts";
import type { Transport, WireResponse } from "./_transport_interface.ts";
import type { ClusterAuth } from "../config/cluster_access.ts";
import { TransportError } from "../errors.ts";

const ENCODER = new TextEncoder();

/** Whether watches and reads are streams of one HTTP/2 connection: always, never, or "auto" (see MULTIPLEX_FROM). */
export type Multiplex = boolean | "auto";

/**
 * With "auto", watches and reads move to HTTP/2 once the process holds more transports than this that could multiplex
 * (about one per cluster), for good: a transport's next watch or read goes there, so the others follow as their watches
 * are renewed. Below it, each watch keeps a TLS connection of our own: node:http2 costs about twice the CPU per watch
 * event and 11 MB more at a 3 × 500 backlog (0.573 against 0.473 ms per object), and its saving, about 0.26 MiB per
 * cluster of three watches, outweighs that only from some 30 clusters on (docs/benchmarks.md "Transports").
 */
export const MULTIPLEX_FROM = 32;

/** The "auto" decision of one process: how many transports could multiplex, and whether HTTP/2 is on. */
export class MultiplexPolicy {
  readonly #from: number;
  #transports = 0;
  #on = false;

  constructor(from = MULTIPLEX_FROM) {
    this.#from = from;
  }

  /** Whether a request of a transport built with `multiplex` may go on HTTP/2, and what to call when it is closed. */
  route(multiplex: Multiplex): { wanted: () => boolean; release: () => void } {
    if (multiplex !== "auto") return { wanted: () => multiplex, release: () => {} };
    if (++this.#transports > this.#from) this.#on = true;
    let released = false;
    return {
      wanted: () => this.#on,
      release: () => {
        if (!released) this.#transports--;
        released = true;
      },
    };
  }
}

const processPolicy = new MultiplexPolicy();

/** {@link MultiplexPolicy.route} of the process's one policy. */
export const multiplexRoute = (multiplex: Multiplex): ReturnType<MultiplexPolicy["route"]> =>
  processPolicy.route(multiplex);

/** A lazily made H2Streams: node:http2 is loaded on the first request that goes there. */
export type H2Connector = () => Promise<H2Streams>;

/**
 * Which requests go out as streams of the HTTP/2 connection besides watches: reads (GET) and the access and identity
 * reviews of pre-flight (POSTs that write nothing). Writes (status and object patches, Events, creates, deletes) are
 * the hot path and cost less CPU on our HTTP/1.1 sockets. So a cluster that only watches and lists, as an idle one
 * does, holds one connection, and its start-up (pre-flight reviews, discovery, first lists, watches) opens one instead
 * of one per request in flight.
 */
export function onH2(method: string, target: string): boolean {
  return method === "GET" ||
    (method === "POST" &&
      (target.startsWith("/apis/authorization.k8s.io/") || target.startsWith("/apis/authentication.k8s.io/")));
}

/**
 * The HTTP/2 sessions a transport carries its watches on, or undefined where watches stay one connection each: a
 * plain-http server, or no CA in the kubeconfig while the certificate is checked (`verify`: node:tls would then load
 * the system store, which needs --allow-sys=ca; our own sockets use Deno's bundled roots).
 */
export function h2For(
  server: string,
  auth: ClusterAuth,
  serverName: string | undefined,
  verify: boolean,
): H2Connector | undefined {
  const url = new URL(server);
  if (url.protocol !== "https:" || (verify && !auth.caCerts?.length)) return undefined;
  let made: Promise<H2Streams> | undefined;
  return () =>
    made ??= import("./_h2_streams.ts").then(({ H2Streams }) =>
      new H2Streams({
        origin: url.origin,
        caCerts: auth.caCerts?.length ? auth.caCerts : undefined,
        cert: auth.cert && auth.key ? auth.cert : undefined,
        key: auth.cert && auth.key ? auth.key : undefined,
        serverName,
        rejectUnauthorized: verify,
      })
    );
}

/**
 * `base` with long requests (watches) and `onH2` requests sent as streams of the connector's HTTP/2 connection while
 * `route.wanted()`, everything else on `base`.
 *
 * Guarantees: `check` refuses a credential or Content-Type header with a line break before anything is sent, on
 * either path; the HTTP/2 connection (and node:http2) is made on the first request that goes there, none before; a
 * server that does not negotiate HTTP/2 gets the request on `base`, and every later one too (the sessions are closed);
 * `close()` closes both and calls `route.release`, and a request in flight then opens no connection; `aliveWithin`
 * answers for the HTTP/2 connection (false before it exists). `prefix` is the server URL's path, put before every
 * target.
 */
export function withH2(
  base: Transport,
  connect: H2Connector,
  prefix: string,
  userAgent: string,
  check: HeaderCheck,
  route: { wanted: () => boolean; release?: () => void } = { wanted: () => true },
): Transport {
  let unsupported = false;
  let closed = false;
  let h2: H2Streams | undefined;
  const stream = async (
    method: string,
    target: string,
    auth: Record<string, string>,
    accept: string | undefined,
    call: Call,
    contentType?: string,
    body?: string | Uint8Array,
  ): Promise<WireResponse | undefined> => {
    const headers: Record<string, string> = { ...auth, accept: accept ?? "application/json", "user-agent": userAgent };
    if (contentType) headers["content-type"] = contentType;
    const streams = h2 ??= await connect();
    if (closed) {
      streams.close();
      throw new TransportError(`${method} ${target}: the client was closed`);
    }
    try {
      return await streams.request(
        method,
        prefix + target,
        headers,
        call,
        typeof body === "string" ? ENCODER.encode(body) : body,
      );
    } catch (err) {
      if ((err as Error)?.name !== "H2UnsupportedError") throw err;
      unsupported = true;
      streams.close();
      return undefined;
    }
  };
  // Not async on the way to `base`: a write costs no promise of this wrapper's own.
  const viaH2: Transport["send"] = async (method, target, auth, contentType, body, call, accept) => {
    check.auth(auth);
    if (contentType) check.contentType(contentType);
    const res = await stream(method, target, auth, accept, call, contentType, body);
    return res ?? await base.send(method, target, auth, contentType, body, call, accept);
  };
  return {
    fp: base.fp,
    send: (method, target, auth, contentType, body, call, accept, long) =>
      !unsupported && (long || onH2(method, target)) && route.wanted()
        ? viaH2(method, target, auth, contentType, body, call, accept)
        : base.send(method, target, auth, contentType, body, call, accept),
    close: () => {
      closed = true;
      route.release?.();
      h2?.close();
      base.close();
    },
    aliveWithin: (ms) => h2?.aliveWithin(ms) ?? false,
    confirmAlive: (ms, timeoutMs) => h2 ? h2.confirmAlive(ms, timeoutMs) : Promise.resolve(false),
    inflight: 0,
    retired: false,
  };
}

// A transport's watches, reads and reviews as streams of one HTTP/2 connection, its writes on the transport it wraps.

import type { Call } from "./_call.ts";
import { H2Streams, H2UnsupportedError } from "./_h2_streams.ts";
import type { HeaderCheck } from "./_header_lines.ts";
import type { Transport, WireResponse } from "./_transport_interface.ts";
import type { ClusterAuth } from "../config/cluster_access.ts";

const ENCODER = new TextEncoder();

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
): H2Streams | undefined {
  const url = new URL(server);
  if (url.protocol !== "https:" || (verify && !auth.caCerts?.length)) return undefined;
  return new H2Streams({
    origin: url.origin,
    caCerts: auth.caCerts?.length ? auth.caCerts : undefined,
    cert: auth.cert && auth.key ? auth.cert : undefined,
    key: auth.cert && auth.key ? auth.key : undefined,
    serverName,
    rejectUnauthorized: verify,
  });
}

/**
 * `base` with long requests (watches) and `onH2` requests sent as streams of `h2`, everything else on `base`.
 *
 * Guarantees: `check` refuses a credential or Content-Type header with a line break before anything is sent, on
 * either path; a server that does not negotiate HTTP/2 gets the request on `base`, and every later one too (the
 * sessions are closed); `close()` closes both; `aliveWithin` answers for the HTTP/2 connection. `prefix` is the
 * server URL's path, put before every target.
 */
export function withH2(
  base: Transport,
  h2: H2Streams,
  prefix: string,
  userAgent: string,
  check: HeaderCheck,
): Transport {
  let unsupported = false;
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
    try {
      return await h2.request(
        method,
        prefix + target,
        headers,
        call,
        typeof body === "string" ? ENCODER.encode(body) : body,
      );
    } catch (err) {
      if (!(err instanceof H2UnsupportedError)) throw err;
      unsupported = true;
      h2.close();
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
      !unsupported && (long || onH2(method, target))
        ? viaH2(method, target, auth, contentType, body, call, accept)
        : base.send(method, target, auth, contentType, body, call, accept),
    close: () => {
      h2.close();
      base.close();
    },
    aliveWithin: (ms) => h2.aliveWithin(ms),
    inflight: 0,
    retired: false,
  };
}

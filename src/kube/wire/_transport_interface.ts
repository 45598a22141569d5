// The one small interface every way of reaching the server implements (Transport), and the response it returns
// (WireResponse): the transports (HTTP/1.1, HTTP/2, fetch, node:https) import it, and it imports none of them.

import type { ByteScratch } from "./_body_limit.ts";
import type { Call } from "./_call.ts";

/** A response as the client reads it, whichever transport carried it. The body is read once. */
export interface WireResponse {
  readonly status: number;
  readonly ok: boolean;
  header(name: string): string | null;
  /**
   * The whole body as UTF-8; over `maxBytes` (default: no limit) it throws BodyLimitError, having held at most that.
   * `scratch` lends the buffer the bytes are gathered in (our own sockets use it; fetch gathers strings).
   */
  text(maxBytes?: number, scratch?: ByteScratch): Promise<string>;
  /**
   * The body's bytes as they arrive; ends at the body's end, or early once the call is aborted. With `transient` the
   * caller is done with each array before it asks for the next, so a transport may lend views of its own buffer.
   */
  chunks(transient?: boolean): AsyncIterable<Uint8Array>;
  /** Reads the body to its end and drops it. */
  discard(): Promise<void>;
  cancel(): void;
}

/** One way to reach the server, built for one set of TLS material (`fp`). */
export interface Transport {
  readonly fp: string;
  /**
   * `auth` holds the credential headers (the same object for as long as credentials are cached); `accept` is the
   * Accept header, default `application/json` (e.g. a PartialObjectMetadataList for a metadata-only list).
   */
  send(
    method: string,
    target: string,
    auth: Record<string, string>,
    contentType: string | undefined,
    body: string | Uint8Array | undefined,
    call: Call,
    accept?: string,
    /** A long-lived request (a watch): always a stream of the client's one HTTP/2 connection where there is one. */
    long?: boolean,
  ): Promise<WireResponse>;
  close(): void;
  /**
   * Whether the connection the transport multiplexes its watches over (HTTP/2) received anything within the last
   * `ms`; absent where each watch has a connection of its own.
   */
  aliveWithin?(ms: number): boolean;
  /**
   * Whether that connection is alive: it received anything within the last `ms`, or answers a PING within
   * `timeoutMs`; absent where each watch has a connection of its own.
   */
  confirmAlive?(ms: number, timeoutMs: number): Promise<boolean>;
  inflight: number;
  retired: boolean;
}

/** Closes a transport, ignoring one already closed. */
export function closeQuietly(t: Transport): void {
  try {
    t.close();
  } catch {
    // Already closed.
  }
}

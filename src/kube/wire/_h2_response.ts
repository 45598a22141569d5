// One HTTP/2 stream's response (src/kube/wire/_h2_streams.ts): its head, and its body read with backpressure.

import type * as http2 from "node:http2";
import { constants } from "node:http2";
import { BodyLimitError, type ByteScratch, declaredOverLimit, GrowingBytes } from "./_body_limit.ts";
import type { Abortable } from "./_http1_connection.ts";
import type { WireResponse } from "./_transport_interface.ts";

/** A stream ended before the server ended its body (reset, or its connection lost). */
export class H2StreamError extends Error {
  override name = "H2StreamError";
}

/** Unread body bytes above which the stream is paused. */
const HIGH_WATER = 256 * 1024;

/** What a response reads and updates of the session its stream belongs to. */
export interface H2SessionState {
  /** When a response head or body bytes last arrived on any of its streams (performance.now()). */
  lastFrame: number;
  /** Destroyed by this side: node:http2 then ends its streams as if the server had. */
  readonly killed: boolean;
}

/** Closes `stream` with RST_STREAM CANCEL, unless it is already gone. */
export function cancelStream(stream: http2.ClientHttp2Stream): void {
  if (stream.closed || stream.destroyed) return;
  try {
    stream.close(constants.NGHTTP2_CANCEL);
  } catch {
    stream.destroy();
  }
}

/** Why a body ended early. */
function lost(stream: http2.ClientHttp2Stream): H2StreamError {
  return new H2StreamError(
    stream.rstCode && stream.rstCode !== constants.NGHTTP2_CANCEL
      ? `the server reset the stream (HTTP/2 error ${stream.rstCode}) before the response ended`
      : "the connection closed before the response ended",
  );
}

/** One stream's response: its head, and its body read with backpressure. */
export class H2Response implements WireResponse {
  readonly status: number;
  readonly ok: boolean;
  readonly #stream: http2.ClientHttp2Stream;
  /**
   * The response headers as name, value, name, value… (names lower case, pseudo-headers left out): a watch holds its
   * response for hours, and node's header object is a dictionary of about 0.4 KB; this is a fifth of that.
   */
  readonly #head: string[];
  readonly #abort: Abortable;
  readonly #queue: Uint8Array[] = [];
  #queued = 0;
  #ended = false;
  #error: unknown;
  #wake: (() => void) | undefined;

  constructor(
    session: H2SessionState,
    stream: http2.ClientHttp2Stream,
    head: http2.IncomingHttpHeaders,
    abort: Abortable,
  ) {
    this.#stream = stream;
    this.#head = flatHeaders(head);
    this.#abort = abort;
    this.status = Number(head[":status"]);
    this.ok = this.status >= 200 && this.status < 300;
    stream.on("data", (chunk: Uint8Array) => {
      session.lastFrame = performance.now();
      this.#queue.push(chunk);
      this.#queued += chunk.length;
      if (this.#queued > HIGH_WATER) stream.pause();
      this.#notify();
    });
    stream.on("end", () => {
      // node:http2 also ends the readable side when the stream was reset (a lost connection resets it) or when this
      // side destroyed the session: only an end without either is the server's END_STREAM. (A session closing after
      // GOAWAY still delivers whole answers: the apiserver sends GOAWAY with the 401 of an unauthenticated request.)
      if (stream.rstCode || session.killed) this.#error ??= lost(stream);
      else this.#ended = true;
      this.#notify();
    });
    stream.on("error", (err) => {
      this.#error ??= err;
      this.#notify();
    });
    stream.on("close", () => {
      if (!this.#ended) this.#error ??= lost(stream);
      this.#notify();
    });
  }

  header(name: string): string | null {
    const key = name.toLowerCase(), head = this.#head;
    for (let i = 0; i < head.length; i += 2) if (head[i] === key) return head[i + 1];
    return null;
  }

  async text(maxBytes = Infinity, scratch?: ByteScratch): Promise<string> {
    const declared = Number.isFinite(maxBytes) ? declaredOverLimit(this.header("content-length"), maxBytes) : undefined;
    if (declared) {
      this.cancel();
      throw declared;
    }
    // As on our HTTP/1.1 sockets: gathered in one growing byte array (the client's scratch), decoded once.
    const length = Number(this.header("content-length"));
    const initial = Number.isSafeInteger(length) && length > 0 ? length : 16 * 1024;
    const acc = scratch?.take(maxBytes, initial) ?? new GrowingBytes(initial).reset(maxBytes);
    let refused = false;
    try {
      for await (const chunk of this.chunks()) {
        if (acc.length + chunk.length > maxBytes) {
          refused = true;
          throw new BodyLimitError("response body", maxBytes);
        }
        acc.push(chunk);
      }
      return acc.text();
    } catch (err) {
      this.cancel();
      throw err;
    } finally {
      scratch?.give(acc, refused);
    }
  }

  async *chunks(_transient?: boolean): AsyncGenerator<Uint8Array, void, undefined> {
    for (;;) {
      if (this.#abort.aborted !== undefined) return;
      const chunk = this.#queue.shift();
      if (chunk) {
        this.#queued -= chunk.length;
        if (this.#queued <= HIGH_WATER && this.#stream.isPaused()) this.#stream.resume();
        yield chunk;
        continue;
      }
      if (this.#ended) return;
      if (this.#error !== undefined) throw this.#error;
      await new Promise<void>((resolve) => this.#wake = resolve);
    }
  }

  async discard(): Promise<void> {
    for await (const _ of this.chunks()) { /* dropped */ }
  }

  cancel(): void {
    this.#queue.length = 0;
    this.#queued = 0;
    cancelStream(this.#stream);
  }

  #notify(): void {
    const wake = this.#wake;
    this.#wake = undefined;
    wake?.();
  }
}

/** `head` as name, value, name, value… without pseudo-headers; a header sent several times joined by ", ". */
function flatHeaders(head: http2.IncomingHttpHeaders): string[] {
  const out: string[] = [];
  for (const name in head) {
    const v = head[name];
    if (name.startsWith(":") || v === undefined) continue;
    out.push(name.toLowerCase(), Array.isArray(v) ? v.join(", ") : String(v));
  }
  return out;
}

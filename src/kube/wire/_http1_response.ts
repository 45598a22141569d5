// One HTTP/1.1 response read off a pooled connection: Content-Length, chunked or until-EOF bodies, as text, chunks or
// dropped; the connection goes back to its owner only after the whole body was read.

import {
  type Abortable,
  type Connection,
  Http1Error,
  indexOfCrlf,
  isClosedSocket,
  latin1,
} from "./_http1_connection.ts";
import { BodyLimitError, type ByteScratch, GrowingBytes } from "./_body_limit.ts";
import { concatBytes } from "../../util/mod.ts";

/** A chunked body's trailer section is refused past this size (the response head has the same cap). */
const MAX_TRAILER_BYTES = 64 * 1024;

/** Where a response hands its connection back: to the idle pool after a complete body, else to be closed. */
export interface ConnectionOwner {
  release(c: Connection): void;
  destroy(c: Connection): void;
}

export type Framing = { kind: "length"; left: number } | { kind: "chunked" } | { kind: "eof" } | { kind: "none" };

type BodyMode = "copy" | "view" | "skip" | ((view: Uint8Array) => void);

/** One response; its body is read once, with `text()` or `chunks()`, or dropped with `cancel()`. */
export class Http1Response {
  readonly status: number;
  /** The status line and header lines, parsed into `headers` only if someone asks. */
  readonly #head: string;
  #headers: Map<string, string> | undefined;
  readonly #pool: ConnectionOwner;
  readonly #c: Connection;
  readonly #framing: Framing;
  readonly #keepAlive: boolean;
  readonly #abort: Abortable;
  #settled = false;

  constructor(
    pool: ConnectionOwner,
    c: Connection,
    status: number,
    head: string,
    framing: Framing,
    keepAlive: boolean,
    abort: Abortable,
  ) {
    this.#pool = pool;
    this.#c = c;
    this.status = status;
    this.#head = head;
    this.#framing = framing;
    this.#keepAlive = keepAlive;
    this.#abort = abort;
    if (framing.kind === "none") this.#finish(true);
  }

  get ok(): boolean {
    return this.status >= 200 && this.status < 300;
  }

  /** One header's value by name (any case), or null. */
  header(name: string): string | null {
    return this.headers.get(name.toLowerCase()) ?? null;
  }

  /** Lower-case header names; a repeated header keeps its last value. */
  get headers(): Map<string, string> {
    if (!this.#headers) {
      this.#headers = new Map();
      for (const line of this.#head.split("\r\n").slice(1)) {
        const colon = line.indexOf(":");
        this.#headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
      }
    }
    return this.#headers;
  }

  /**
   * The whole body as UTF-8 text, of at most `maxBytes` bytes: a longer body throws BodyLimitError, before any byte
   * is read when its Content-Length says so, else once byte `maxBytes + 1` arrived; the connection is then closed.
   */
  async text(maxBytes = Infinity, scratch?: ByteScratch): Promise<string> {
    if (this.#framing.kind === "length" && this.#framing.left > maxBytes && !this.#settled) {
      this.cancel();
      throw new BodyLimitError("response body", maxBytes, this.#framing.left);
    }
    // Copied into one growing byte array and decoded once at the end: a body refused half-way is one array outside
    // the JS heap, reused by the client's next read (`scratch`), never thousands of strings promoted to the old space.
    const initial = this.#framing.kind === "length" ? this.#framing.left : 16 * 1024;
    const acc = scratch?.take(maxBytes, initial) ?? new GrowingBytes(initial).reset(maxBytes);
    let refused = false;
    const sink = (view: Uint8Array) => {
      if (acc.length + view.length > maxBytes) {
        refused = true;
        throw new BodyLimitError("response body", maxBytes);
      }
      acc.push(view);
    };
    try {
      for await (const _ of this.#body(sink)) {
        /* the sink took every byte */
      }
      return acc.text();
    } finally {
      scratch?.give(acc, refused);
    }
  }

  /**
   * The body as it arrives. With `transient`, each yielded array is a view of the socket buffer, valid only until the
   * consumer asks for the next one (no copy per read); otherwise a fresh copy. Each holds body bytes that the
   * last read delivered (several watch events at once under load). Ends at the body's end.
   */
  chunks(transient = false): AsyncGenerator<Uint8Array, void, undefined> {
    return this.#body(transient ? "view" : "copy");
  }

  /** Reads the body to its end without keeping it (the connection can then be reused). */
  async discard(): Promise<void> {
    for await (const _ of this.#body("skip")) { /* nothing is yielded */ }
  }

  /**
   * Walks the body. "copy" yields fresh arrays; "view" yields views of the buffer (valid until the next step);
   * "skip" drops the bytes; a sink function receives
   * views of the socket buffer synchronously (valid only during the call) and nothing is yielded.
   */
  async *#body(mode: BodyMode): AsyncGenerator<Uint8Array, void, undefined> {
    const copy = mode === "copy";
    const view = mode === "view";
    const sink = typeof mode === "function" ? mode : undefined;
    if (this.#settled) return;
    const c = this.#c;
    const f = this.#framing;
    let done = false;
    try {
      if (f.kind === "length") {
        while (f.left > 0) {
          if (c.end === c.start && !(await this.#fill())) throw new Http1Error("the connection closed mid-body");
          const n = Math.min(f.left, c.end - c.start);
          sink?.(c.buf.subarray(c.start, c.start + n));
          // A view only while the connection is ours: once released, another request may refill the buffer.
          const out = copy || (view && n === f.left)
            ? c.buf.slice(c.start, c.start + n)
            : view
            ? c.buf.subarray(c.start, c.start + n)
            : undefined;
          c.start += n;
          f.left -= n;
          if (f.left === 0) {
            // Copied out first: the connection may serve another request before the caller resumes.
            done = true;
            this.#finish(true);
          }
          if (out) yield out;
        }
      } else if (f.kind === "eof") {
        for (;;) {
          if (c.end > c.start) {
            sink?.(c.buf.subarray(c.start, c.end));
            const out = copy ? c.buf.slice(c.start, c.end) : view ? c.buf.subarray(c.start, c.end) : undefined;
            c.start = c.end;
            if (out) yield out;
          }
          if (!(await this.#fill())) break;
        }
        done = true;
        this.#finish(false);
      } else if (f.kind === "chunked") {
        yield* this.#chunked(copy ? "copy" : view ? "view" : undefined, sink);
        done = true;
      }
    } finally {
      if (!done) this.#finish(false);
    }
  }

  /** Drops the rest of the body (and the connection, unless the body was already read). */
  cancel(): void {
    this.#finish(false);
  }

  async *#chunked(
    out: "copy" | "view" | undefined,
    sink?: (view: Uint8Array) => void,
  ): AsyncGenerator<Uint8Array, void, undefined> {
    const c = this.#c;
    let inChunk = 0; // data bytes left in the current chunk
    let needCrlf = false; // the CRLF after a chunk's data is due
    for (;;) {
      const parts: Uint8Array[] = [];
      for (;;) {
        if (inChunk > 0) {
          const n = Math.min(inChunk, c.end - c.start);
          if (n === 0) break;
          sink?.(c.buf.subarray(c.start, c.start + n));
          if (out === "copy") parts.push(c.buf.slice(c.start, c.start + n));
          else if (out === "view") parts.push(c.buf.subarray(c.start, c.start + n));
          c.start += n;
          inChunk -= n;
          if (inChunk === 0) needCrlf = true;
          continue;
        }
        if (needCrlf) {
          if (c.end - c.start < 2) break;
          if (c.buf[c.start] !== 13 || c.buf[c.start + 1] !== 10) throw new Http1Error("malformed chunked body");
          c.start += 2;
          needCrlf = false;
        }
        const eol = indexOfCrlf(c.buf, c.start, c.end);
        if (eol < 0) {
          if (c.end - c.start > 1024) throw new Http1Error("malformed chunked body: chunk size line too long");
          break;
        }
        const sizeText = latin1.decode(c.buf.subarray(c.start, eol));
        const semi = sizeText.indexOf(";");
        const hex = (semi < 0 ? sizeText : sizeText.slice(0, semi)).trim();
        if (!/^[0-9a-fA-F]{1,12}$/.test(hex)) throw new Http1Error("malformed chunked body: bad chunk size");
        const size = parseInt(hex, 16);
        if (size === 0) {
          // Trailers (none expected) end with an empty line.
          // Kept relative to c.start: fill() may move the buffer's bytes to its front.
          c.start = eol + 2;
          let at = 0;
          for (;;) {
            const next = indexOfCrlf(c.buf, c.start + at, c.end);
            // Held in the buffer until the blank line: bounded like the headers, or a server could grow it forever.
            if (c.end - c.start > MAX_TRAILER_BYTES) {
              throw new Http1Error(`malformed chunked body: trailer larger than ${MAX_TRAILER_BYTES} bytes`);
            }
            if (next < 0) {
              if (!(await this.#fill())) throw new Http1Error("the connection closed in the chunked trailer");
              continue;
            }
            if (next === c.start + at) {
              c.start = next + 2;
              break;
            }
            at = next + 2 - c.start;
          }
          // Yielded before the connection is released, so views of its buffer are still valid.
          if (out === "view") yield* parts;
          else if (parts.length) yield concatBytes(parts);
          this.#finish(true);
          return;
        }
        c.start = eol + 2;
        inChunk = size;
      }
      if (out === "view") yield* parts; // views stay valid until the next fill()
      else if (parts.length) yield parts.length === 1 ? parts[0] : concatBytes(parts);
      if (!(await this.#fill())) throw new Http1Error("the connection closed mid-body");
    }
  }

  async #fill(): Promise<boolean> {
    try {
      return await this.#c.fill();
    } catch (err) {
      if (this.#abort.aborted !== undefined) throw this.#abort.aborted;
      if (isClosedSocket(err)) throw new Http1Error("the connection closed mid-body", { cause: err });
      throw err;
    }
  }

  #finish(complete: boolean): void {
    if (this.#settled) return;
    this.#settled = true;
    if (complete && this.#keepAlive && this.#abort.aborted === undefined) this.#pool.release(this.#c);
    else this.#pool.destroy(this.#c);
  }
}

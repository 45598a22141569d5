// Where one HTTP/1.1 request ends on a kept-alive connection: its head's end, and how many body bytes follow. Pure.

const decoder = new TextDecoder();
const END_CRLF = [13, 10, 13, 10];
const END_LF = [10, 10];
const CLOSE_CRLF = new TextEncoder().encode("connection: close\r\n");
const CLOSE_LF = new TextEncoder().encode("connection: close\n");

/** Keep-alive on a gated port: how long and how many requests one connection serves. */
export interface KeepAliveLimits {
  /** Requests one connection serves; the last is handed on with `connection: close`. Default 100. */
  maxRequests?: number;
  /** A connection waiting this long for its next request (its previous one answered) is closed. Default 15 s. */
  idleTimeoutMs?: number;
}

/** The index just past the empty line that ends a request head (CRLF CRLF or LF LF), searched from `from`; or -1. */
export function headEnd(bytes: Uint8Array, from = 0): number {
  for (let i = Math.max(0, from); i < bytes.length; i++) {
    if (bytes[i] !== 10) continue;
    if (bytes[i + 1] === 10) return i + 2;
    if (bytes[i + 1] === 13 && bytes[i + 2] === 10) return i + 3;
  }
  return -1;
}

/**
 * How many body bytes follow `head` when the next request may follow on the same connection; `undefined` when the
 * gate cannot tell where this request ends without parsing more than a head, so it must be the connection's last:
 * HTTP/1.0, a `transfer-encoding` (chunked), an `upgrade`, the client's own `connection: close`, or a missing, repeated
 * or malformed `content-length` on a method with a body.
 */
export function bodyLength(head: Uint8Array): number | undefined {
  const lines = decoder.decode(head).split(/\r?\n/);
  if (!/ HTTP\/1\.1$/.test(lines[0] ?? "")) return undefined;
  const lengths: string[] = [];
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(":");
    if (colon <= 0) continue;
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    if (name === "transfer-encoding" || name === "upgrade") return undefined;
    if (name === "connection" && /(^|,)\s*close\s*(,|$)/i.test(value)) return undefined;
    if (name === "content-length") lengths.push(value);
  }
  if (lengths.length === 0) return 0;
  if (lengths.length > 1 || !/^\d{1,15}$/.test(lengths[0])) return undefined;
  return Number(lengths[0]);
}

/** The head with `connection: close` inserted after its request line (a line without an end is left alone). */
export function oneRequestOnly(head: Uint8Array): Uint8Array {
  const eol = head.indexOf(10);
  if (eol < 0) return head;
  const line = head[eol - 1] === 13 ? CLOSE_CRLF : CLOSE_LF;
  const out = new Uint8Array(head.length + line.length);
  out.set(head.subarray(0, eol + 1));
  out.set(line, eol + 1);
  out.set(head.subarray(eol + 1), eol + 1 + line.length);
  return out;
}

/** Whether `bytes` holds an empty line (CRLF CRLF, or LF LF as lenient parsers accept) at or after `from`. */
export function endsHead(bytes: Uint8Array, from = 0): boolean {
  for (let i = from; i < bytes.length; i++) {
    if (bytes[i] !== 10 && bytes[i] !== 13) continue;
    if (matches(bytes, i, END_CRLF) || matches(bytes, i, END_LF)) return true;
  }
  return false;
}

function matches(bytes: Uint8Array, at: number, pattern: number[]): boolean {
  if (at + pattern.length > bytes.length) return false;
  for (let j = 0; j < pattern.length; j++) if (bytes[at + j] !== pattern[j]) return false;
  return true;
}

/** A client connection's input with what was read past the request handed on so far. */
export class ClientInput {
  readonly #conn: Deno.Conn;
  #rest = new Uint8Array(0);

  constructor(conn: Deno.Conn) {
    this.#conn = conn;
  }

  /** Bytes read and not yet taken. */
  get buffered(): number {
    return this.#rest.length;
  }

  /** Reads once more from the client; false when it ended its input. */
  async fill(): Promise<boolean> {
    const buf = new Uint8Array(16 * 1024);
    const n = await this.#conn.read(buf);
    if (n === null) return false;
    const next = new Uint8Array(this.#rest.length + n);
    next.set(this.#rest);
    next.set(buf.subarray(0, n), this.#rest.length);
    this.#rest = next;
    return true;
  }

  /** The first `n` buffered bytes (all by default), removed from the buffer. */
  take(n = this.#rest.length): Uint8Array {
    const out = this.#rest.subarray(0, n);
    this.#rest = this.#rest.subarray(n);
    return out;
  }

  /** Reads until a whole head is buffered and takes it; null when the client ended first. */
  async head(maxBytes: number): Promise<Uint8Array | "oversized" | null> {
    for (;;) {
      const end = headEnd(this.#rest);
      if (end > maxBytes || (end < 0 && this.#rest.length > maxBytes)) return "oversized";
      if (end >= 0) return this.take(end);
      if (!(await this.fill())) return null;
    }
  }

  /** Copies exactly `n` body bytes to `to` (buffered ones first); throws when the client ends before. */
  async pipe(n: number, to: (bytes: Uint8Array) => Promise<void>): Promise<void> {
    for (let left = n; left > 0;) {
      if (!this.buffered && !(await this.fill())) throw new Error("the client ended its input inside a body");
      const chunk = this.take(Math.min(left, this.buffered));
      await to(chunk);
      left -= chunk.length;
    }
  }
}

// The cap on what one response may make the client hold: a body read as text, one watch line. Refused, never buffered.
//
// Guarantees: a body is refused from its Content-Length before a byte of it is read, or as soon as more than `limit`
// bytes arrived (chunked, until-EOF, or a lying Content-Length), so at most `limit` bytes of it are ever held; the
// error carries sizes only, never content.

/** A body or a watch line over the client's limit. `declaredBytes` is set when the server said the size up front. */
export class BodyLimitError extends Error {
  override name = "BodyLimitError";
  readonly limitBytes: number;
  readonly declaredBytes: number | undefined;
  readonly what: "response body" | "watch event";

  constructor(what: "response body" | "watch event", limitBytes: number, declaredBytes?: number) {
    super(
      declaredBytes === undefined
        ? `a ${what} of more than ${limitBytes} bytes`
        : `a ${what} of ${declaredBytes} bytes (Content-Length), over the limit of ${limitBytes} bytes`,
    );
    this.what = what;
    this.limitBytes = limitBytes;
    this.declaredBytes = declaredBytes;
  }
}

/** The error for a declared Content-Length over `limit`, or undefined when it fits (or was not sent). */
export function declaredOverLimit(contentLength: string | null, limit: number): BodyLimitError | undefined {
  if (contentLength === null || !/^\s*\d{1,16}\s*$/.test(contentLength)) return undefined;
  const n = Number(contentLength);
  return n > limit ? new BodyLimitError("response body", limit, n) : undefined;
}

/**
 * Decodes `chunks` as UTF-8 text of at most `limit` bytes; throws BodyLimitError as soon as one more arrives (the
 * caller cancels the body). The pieces form a rope that JSON.parse flattens once.
 */
export async function limitedText(chunks: AsyncIterable<Uint8Array>, limit: number): Promise<string> {
  const decoder = new TextDecoder();
  let text = "";
  let bytes = 0;
  for await (const chunk of chunks) {
    bytes += chunk.length;
    if (bytes > limit) throw new BodyLimitError("response body", limit);
    text += decoder.decode(chunk, { stream: true });
  }
  return text + decoder.decode();
}

/**
 * Bytes appended into one array that doubles as needed (never beyond `limit`), decoded as UTF-8 once at the end. A
 * partial body or line held here is a single allocation outside the JS heap.
 */
export class GrowingBytes {
  #buf: Uint8Array;
  #limit = Infinity;
  length = 0;

  constructor(initial = 16 * 1024) {
    this.#buf = new Uint8Array(Math.max(16, Math.min(initial, 1 << 20)));
  }

  /** Bytes it can hold without growing. */
  get capacity(): number {
    return this.#buf.length;
  }

  /** Empties it for reuse; it will not grow past `limit` bytes. */
  reset(limit: number): this {
    this.length = 0;
    this.#limit = limit;
    return this;
  }

  push(bytes: Uint8Array): void {
    const need = this.length + bytes.length;
    if (need > this.#buf.length) {
      const bigger = new Uint8Array(Math.max(need, Math.min(this.#limit, this.#buf.length * 2)));
      bigger.set(this.#buf.subarray(0, this.length));
      this.#buf = bigger;
    }
    this.#buf.set(bytes, this.length);
    this.length = need;
  }

  /** The bytes as UTF-8 text (a sequence split at the end is replaced, as TextDecoder does). */
  text(): string {
    return new TextDecoder().decode(this.#buf.subarray(0, this.length));
  }
}

/** A spare buffer this small is kept after any read; a larger one only after a refusal (the server will try again). */
const KEEP_ALWAYS_BYTES = 64 * 1024;

/**
 * One client's spare GrowingBytes, so a server that sends body after oversized body (each refused, retried with
 * backoff) is read into the same memory every time instead of leaving a cap's worth of garbage per attempt.
 *
 * Guarantees: holds at most one spare, of at most the largest limit it was used with; a large spare is dropped by the
 * next read that completes within limits, so a cluster that stopped misbehaving keeps only a small one.
 */
export class ByteScratch {
  #spare: GrowingBytes | undefined;

  /** A buffer for one body or line of at most `limit` bytes: the spare, or a new one. */
  take(limit: number, initial?: number): GrowingBytes {
    const g = this.#spare ?? new GrowingBytes(initial);
    this.#spare = undefined;
    return g.reset(limit);
  }

  /** Gives `g` back once its bytes are no longer needed; `refused` says whether its read ended over the limit. */
  give(g: GrowingBytes, refused: boolean): void {
    if (!this.#spare && (refused || g.capacity <= KEEP_ALWAYS_BYTES)) this.#spare = g;
  }
}

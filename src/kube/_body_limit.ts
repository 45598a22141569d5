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

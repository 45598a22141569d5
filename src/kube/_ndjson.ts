// Splits a chunked newline-delimited JSON byte stream (a watch response body) into parsed values.

/** A line of the stream that is not JSON. The message gives its size, never its content. */
export class NdjsonError extends Error {
  override name = "NdjsonError";
}

/**
 * Incremental NDJSON decoder.
 *
 * Guarantees: a UTF-8 sequence or a line split across any number of chunks is reassembled
 * exactly once; a long line costs linear time (pieces are joined once, when its newline
 * arrives); blank lines and `\r\n` endings are tolerated.
 */
export class NdjsonDecoder {
  readonly #decoder = new TextDecoder();
  #pending: string[] = [];

  /** Decodes one chunk and returns every value whose line is now complete. */
  push(chunk: Uint8Array): unknown[] {
    return this.#lines(this.#decoder.decode(chunk, { stream: true }));
  }

  /** Ends the stream; returns the last value when the final line had no newline. */
  end(): unknown[] {
    const out = this.#lines(this.#decoder.decode());
    if (this.#pending.length > 0) {
      const line = this.#pending.join("");
      this.#pending = [];
      parseLine(line, out);
    }
    return out;
  }

  /** True while part of a line is buffered. */
  get partial(): boolean {
    return this.#pending.length > 0;
  }

  #lines(text: string): unknown[] {
    const out: unknown[] = [];
    let start = 0;
    let nl = text.indexOf("\n");
    while (nl >= 0) {
      let line = text.slice(start, nl);
      if (this.#pending.length > 0) {
        this.#pending.push(line);
        line = this.#pending.join("");
        this.#pending = [];
      }
      parseLine(line, out);
      start = nl + 1;
      nl = text.indexOf("\n", start);
    }
    if (start < text.length) this.#pending.push(start === 0 ? text : text.slice(start));
    return out;
  }
}

function parseLine(line: string, out: unknown[]): void {
  const trimmed = line.endsWith("\r") ? line.slice(0, -1) : line;
  if (trimmed.trim() === "") return;
  try {
    out.push(JSON.parse(trimmed));
  } catch {
    throw new NdjsonError(`a line of ${trimmed.length} characters in the stream is not valid JSON`);
  }
}

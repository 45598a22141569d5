// Splits a chunked newline-delimited JSON byte stream (a watch response body) into parsed values, one line at most
// `maxLineBytes` long.

import { BodyLimitError } from "./_body_limit.ts";

/** A line of the stream that is not JSON. The message gives its size, never its content. */
export class NdjsonError extends Error {
  override name = "NdjsonError";
}

/** What an NdjsonDecoder accepts. */
export interface NdjsonOptions {
  /**
   * The longest line kept, in bytes, newline excluded. A longer one throws BodyLimitError as soon as its byte
   * `maxLineBytes + 1` arrives, so the decoder never holds more than this of one line. Default: no limit.
   */
  maxLineBytes?: number;
}

/**
 * Incremental NDJSON decoder.
 *
 * Guarantees: a UTF-8 sequence or a line split across any number of chunks is reassembled
 * exactly once; a long line costs linear time (pieces are joined once, when its newline
 * arrives); blank lines and `\r\n` endings are tolerated; a line over `maxLineBytes` is refused
 * with BodyLimitError while at most `maxLineBytes` of it are held, whether it arrives in one chunk or many.
 */
export class NdjsonDecoder {
  readonly #decoder = new TextDecoder();
  readonly #max: number;
  #pending: string[] = [];
  /** Bytes of the line under way (the pieces in #pending). */
  #pendingBytes = 0;

  constructor(options: NdjsonOptions = {}) {
    this.#max = options.maxLineBytes ?? Infinity;
  }

  /** Decodes one chunk and returns every value whose line is now complete. */
  push(chunk: Uint8Array): unknown[] {
    const out: unknown[] = [];
    let start = 0;
    for (;;) {
      // A newline byte is never inside a UTF-8 sequence: splitting the bytes there keeps characters whole.
      const nl = chunk.indexOf(10, start);
      const end = nl < 0 ? chunk.length : nl;
      if (this.#pendingBytes + end - start > this.#max) {
        this.#pending = [];
        this.#pendingBytes = 0;
        throw new BodyLimitError("watch event", this.#max);
      }
      if (nl < 0) {
        if (end > start) {
          this.#pending.push(this.#decoder.decode(chunk.subarray(start), { stream: true }));
          this.#pendingBytes += end - start;
        }
        return out;
      }
      let line = this.#decoder.decode(chunk.subarray(start, nl), { stream: true });
      if (this.#pending.length > 0) {
        this.#pending.push(line);
        line = this.#pending.join("");
        this.#pending = [];
      }
      this.#pendingBytes = 0;
      parseLine(line, out);
      start = nl + 1;
    }
  }

  /** Ends the stream; returns the last value when the final line had no newline. */
  end(): unknown[] {
    const out: unknown[] = [];
    const rest = this.#decoder.decode();
    if (rest) this.#pending.push(rest);
    if (this.#pending.length > 0) {
      const line = this.#pending.join("");
      this.#pending = [];
      this.#pendingBytes = 0;
      parseLine(line, out);
    }
    return out;
  }

  /** True while part of a line is buffered. */
  get partial(): boolean {
    return this.#pending.length > 0;
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

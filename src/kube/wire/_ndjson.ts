// Splits a chunked newline-delimited JSON byte stream (a watch response body) into parsed values, one line at most
// `maxLineBytes` long.

import { BodyLimitError, ByteScratch, type GrowingBytes } from "./_body_limit.ts";

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
  /** Where a line that spans chunks is gathered (the client's spare buffer); default a new buffer per line. */
  scratch?: ByteScratch;
}

/**
 * Incremental NDJSON decoder.
 *
 * Guarantees: a UTF-8 sequence or a line split across any number of chunks is reassembled
 * exactly once; a long line costs linear time (its bytes are copied into one doubling array and
 * decoded once, when its newline arrives); blank lines and `\r\n` endings are tolerated; a line over `maxLineBytes` is refused
 * with BodyLimitError while at most `maxLineBytes` of it are held, whether it arrives in one chunk or many.
 */
export class NdjsonDecoder {
  readonly #max: number;
  readonly #scratch: ByteScratch;
  /** The bytes of the line under way, when it spans chunks: one array outside the JS heap, dropped when refused. */
  #pending: GrowingBytes | undefined;

  constructor(options: NdjsonOptions = {}) {
    this.#max = options.maxLineBytes ?? Infinity;
    this.#scratch = options.scratch ?? new ByteScratch();
  }

  /** Decodes one chunk and returns every value whose line is now complete. */
  push(chunk: Uint8Array): unknown[] {
    const out: unknown[] = [];
    let start = 0;
    for (;;) {
      // A newline byte is never inside a UTF-8 sequence: splitting the bytes there keeps characters whole.
      const nl = chunk.indexOf(10, start);
      const end = nl < 0 ? chunk.length : nl;
      if ((this.#pending?.length ?? 0) + end - start > this.#max) {
        if (this.#pending) this.#scratch.give(this.#pending, true);
        this.#pending = undefined;
        throw new BodyLimitError("watch event", this.#max);
      }
      if (nl < 0) {
        if (end > start) (this.#pending ??= this.#scratch.take(this.#max)).push(chunk.subarray(start));
        return out;
      }
      let line: string;
      if (this.#pending) {
        this.#pending.push(chunk.subarray(start, nl));
        line = this.#pending.text();
        this.#scratch.give(this.#pending, false);
        this.#pending = undefined;
      } else line = UTF8.decode(chunk.subarray(start, nl));
      parseLine(line, out);
      start = nl + 1;
    }
  }

  /** Ends the stream; returns the last value when the final line had no newline. */
  end(): unknown[] {
    const out: unknown[] = [];
    if (this.#pending) {
      const line = this.#pending.text();
      this.#scratch.give(this.#pending, false);
      this.#pending = undefined;
      parseLine(line, out);
    }
    return out;
  }

  /** True while part of a line is buffered. */
  get partial(): boolean {
    return this.#pending !== undefined;
  }
}

const UTF8 = new TextDecoder();

function parseLine(line: string, out: unknown[]): void {
  const trimmed = line.endsWith("\r") ? line.slice(0, -1) : line;
  if (trimmed.trim() === "") return;
  try {
    out.push(JSON.parse(trimmed));
  } catch {
    throw new NdjsonError(`a line of ${trimmed.length} characters in the stream is not valid JSON`);
  }
}

// One HTTP/1.1 socket and its read buffer, and the byte-level helpers the pool and its responses share.

/** Cancellation as the client hands it over: a reason once aborted, and a cheap abort hook. */
export interface Abortable {
  /** The abort reason, once aborted. */
  readonly aborted: unknown;
  /** Registers `fn` to run on abort (at most once); not called if already aborted. */
  onAbort(fn: () => void): void;
}

/** The socket closed, or the response was not HTTP/1.1 as expected. Never carries header values. */
export class Http1Error extends Error {
  override name = "Http1Error";
}

export const enc = new TextEncoder();
export const latin1 = new TextDecoder("latin1");
/** A connection's read buffer starts this small (an idle watch reads bookmarks of a few hundred bytes) and doubles. */
export const INITIAL_BUFFER = 4 * 1024;

/** One socket and its read buffer. */
export class Connection {
  readonly #conn: Deno.Conn;
  buf = new Uint8Array(INITIAL_BUFFER);
  start = 0;
  end = 0;
  idleSince = 0;
  /** Requests served; > 0 means the connection was reused. */
  served = 0;
  closed = false;
  /** The request using the connection now, if any. */
  owner: Abortable | undefined;

  constructor(conn: Deno.Conn) {
    this.#conn = conn;
  }

  async write(bytes: Uint8Array): Promise<void> {
    let off = 0;
    while (off < bytes.length) off += await this.#conn.write(off === 0 ? bytes : bytes.subarray(off));
  }

  /** Reads more bytes into the buffer; false at EOF. */
  async fill(): Promise<boolean> {
    if (this.start > 0 && this.start === this.end) this.start = this.end = 0;
    if (this.end === this.buf.length) {
      if (this.start > 0) {
        this.buf.copyWithin(0, this.start, this.end);
        this.end -= this.start;
        this.start = 0;
      } else {
        const bigger = new Uint8Array(this.buf.length * 2);
        bigger.set(this.buf);
        this.buf = bigger;
      }
    }
    const n = await this.#conn.read(this.buf.subarray(this.end));
    if (n === null) return false;
    this.end += n;
    return true;
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    try {
      this.#conn.close();
    } catch {
      // Already closed.
    }
  }
}

/** Resolves like `p` unless `abort` fires first; a connection arriving after the abort is closed. */
export function raced<T extends { close(): void }>(p: Promise<T>, abort: Abortable): Promise<T> {
  if (abort.aborted !== undefined) {
    p.then((c) => c.close(), () => {});
    return Promise.reject(abort.aborted);
  }
  return new Promise<T>((resolve, reject) => {
    let late = false;
    abort.onAbort(() => {
      late = true;
      reject(abort.aborted);
    });
    p.then((c) => {
      if (late) c.close();
      else resolve(c);
    }, (err) => {
      if (!late) reject(err);
    });
  });
}

/** The peer closed or reset the socket (rustls reports a close without close_notify as a plain Error). */
export function isClosedSocket(err: unknown): boolean {
  return err instanceof Deno.errors.ConnectionReset || err instanceof Deno.errors.BrokenPipe ||
    err instanceof Deno.errors.ConnectionAborted || err instanceof Deno.errors.UnexpectedEof ||
    (err instanceof Error && /close_notify|unexpected eof/i.test(err.message));
}

export function indexOfCrlf(b: Uint8Array, from: number, to: number): number {
  for (let i = from; i + 1 < to; i++) {
    if (b[i] === 13 && b[i + 1] === 10) return i;
  }
  return -1;
}

export function indexOfBlankLine(b: Uint8Array, from: number, to: number): number {
  for (let i = from; i + 3 < to; i++) {
    if (b[i] === 13 && b[i + 1] === 10 && b[i + 2] === 13 && b[i + 3] === 10) return i;
  }
  return -1;
}

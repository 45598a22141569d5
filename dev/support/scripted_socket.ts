// Test support: a socket whose reads replay scripted pieces, for the unit tests of the HTTP/1.1 buffer and body readers.

const enc = new TextEncoder();

/**
 * A socket whose reads return the scripted pieces in order (as much of each as fits the read's buffer, the rest on the
 * next read), then EOF; writes accept at most `perWrite` bytes each and are kept in `written`; closes are counted.
 */
export class ScriptedSocket {
  readonly pieces: Uint8Array[];
  written: Uint8Array[] = [];
  writeCalls = 0;
  closes = 0;
  readonly perWrite: number;

  constructor(pieces: (string | Uint8Array)[], perWrite = Infinity) {
    this.pieces = pieces.map((p) => typeof p === "string" ? enc.encode(p) : p);
    this.perWrite = perWrite;
  }

  read(into: Uint8Array): Promise<number | null> {
    const next = this.pieces.shift();
    if (!next) return Promise.resolve(null);
    const n = Math.min(into.length, next.length);
    into.set(next.subarray(0, n));
    if (n < next.length) this.pieces.unshift(next.subarray(n));
    return Promise.resolve(n);
  }

  write(bytes: Uint8Array): Promise<number> {
    this.writeCalls++;
    const n = Math.min(bytes.length, this.perWrite);
    this.written.push(bytes.slice(0, n));
    return Promise.resolve(n);
  }

  close(): void {
    this.closes++;
  }

  /** This socket as the Deno.Conn the code under test takes (it uses only read, write and close). */
  asConn(): Deno.Conn {
    return this as unknown as Deno.Conn;
  }
}

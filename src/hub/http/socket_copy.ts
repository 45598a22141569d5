// Moving bytes between two sockets: the connection gate's and the admission TLS front's one way of copying and closing.

/**
 * Copies from `from` to `to` until `from` ends (true) or either side fails (false), calling `onData` after each
 * write; never rejects. A 16 KiB buffer per call, held while it runs.
 */
export async function copy(from: Deno.Conn, to: Deno.Conn, onData?: () => void): Promise<boolean> {
  const buf = new Uint8Array(16 * 1024);
  try {
    for (;;) {
      const n = await from.read(buf);
      if (n === null) return true;
      await writeAll(to, buf.subarray(0, n));
      onData?.();
    }
  } catch {
    return false; // one side closed: the exchange is over
  }
}

/** `a` then `b` in one array (`a` itself when `b` is empty). */
export function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  if (!b.length) return a;
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}

/** Writes every byte of `bytes`; rejects when the socket fails. */
export async function writeAll(conn: Deno.Conn, bytes: Uint8Array): Promise<void> {
  for (let off = 0; off < bytes.length;) off += await conn.write(bytes.subarray(off));
}

/** Closes `conn` (a connection or a listener), ignoring that it is already closed. */
export function closeQuietly(conn: { close(): void }): void {
  try {
    conn.close();
  } catch { /* already closed */ }
}

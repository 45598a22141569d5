// Test helper for the gate's tests over loopback sockets: reading what a connection sends, with a hang guard.

const dec = new TextDecoder();

/** Resolves with the bytes read until the peer closes (null read or error); fails after `guardMs` (hang guard). */
export async function readToClose(conn: Deno.Conn, guardMs = 5_000): Promise<string> {
  let out = "";
  const buf = new Uint8Array(4096);
  const guard = setTimeout(() => conn.close(), guardMs);
  try {
    for (;;) {
      const n = await conn.read(buf);
      if (n === null) return out;
      out += dec.decode(buf.subarray(0, n));
    }
  } catch (err) {
    if (err instanceof Deno.errors.BadResource) throw new Error(`hang guard: not closed within ${guardMs} ms`);
    return out;
  } finally {
    clearTimeout(guard);
  }
}

/** Reads until `pattern` is in what arrived; fails on a close first or after `guardMs`. */
export async function readUntil(conn: Deno.Conn, pattern: RegExp, guardMs = 5_000): Promise<string> {
  let out = "";
  const buf = new Uint8Array(4096);
  const deadline = Date.now() + guardMs;
  while (!pattern.test(out)) {
    const n = await Promise.race([
      conn.read(buf),
      new Promise<"late">((r) => setTimeout(() => r("late"), Math.max(0, deadline - Date.now()))),
    ]);
    if (n === "late") throw new Error(`hang guard: ${pattern} not in ${JSON.stringify(out)}`);
    if (n === null) throw new Error(`closed before ${pattern}: ${JSON.stringify(out)}`);
    out += dec.decode(buf.subarray(0, n));
  }
  return out;
}

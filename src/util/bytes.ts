// Byte chunks joined into one array: how a body read in pieces (a socket, a stream, a plugin's output) becomes whole.

/** `parts`, in order, copied into one new array (always a copy: a part may be a view of a buffer that is reused). */
export function concatBytes(parts: readonly Uint8Array[]): Uint8Array {
  let n = 0;
  for (const p of parts) n += p.length;
  const out = new Uint8Array(n);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

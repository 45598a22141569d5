// The events of a watch response body, for the tests' own observers (which share no code with the hub).
// deno-lint-ignore-file no-explicit-any -- watch events are JSON checked by the tests themselves.

/**
 * Yields one parsed JSON value per line of a streaming body until it ends or `signal` aborts.
 *
 * Guarantees: it reads with an explicit reader that is cancelled as soon as `signal` aborts, so stopping an observer
 * never waits for the server to end the stream (Deno does not always end a body being read when the request's own
 * signal aborts: a test's teardown hung on it); the reader is released on every exit.
 */
export async function* watchEvents(body: ReadableStream<Uint8Array>, signal: AbortSignal): AsyncGenerator<any> {
  const reader = body.getReader();
  const onAbort = () => void reader.cancel().catch(() => {});
  signal.addEventListener("abort", onAbort, { once: true });
  const decoder = new TextDecoder();
  let buf = "";
  try {
    while (!signal.aborted) {
      const { done, value } = await reader.read();
      if (done) return;
      buf += decoder.decode(value, { stream: true });
      let nl;
      while ((nl = buf.indexOf("\n")) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        if (line.trim()) yield JSON.parse(line);
        if (signal.aborted) return;
      }
    }
  } finally {
    signal.removeEventListener("abort", onAbort);
    await reader.cancel().catch(() => {});
  }
}

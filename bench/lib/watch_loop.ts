// The bench observers' one watch loop: opens a watch stream on one cluster and hands each event line to the caller.

import type { BenchCluster } from "./cluster.ts";

/** What {@linkcode watchLoop} calls while the stream runs. */
export interface WatchLoopHandlers {
  /** Called once the apiserver answered 2xx with a body, before the first line. */
  opened?: () => void;
  /** Each complete event line (one JSON watch event), with performance.now() of the chunk that completed it. */
  line: (line: string, now: number) => void;
  /** After each chunk's lines were handed over. */
  chunk?: () => void;
}

/**
 * Streams the watch `path` (query included, with `watch=true`) of cluster `c` until the server ends it or `signal`
 * aborts, and hands every event line to `handlers.line`.
 *
 * Guarantees: throws `<label>: <status>` when the watch is not answered 2xx, and `<label>: <line>` (first 200
 * characters) on an ERROR event; the body is cancelled on every way out, also when `signal` aborts while a read is
 * pending (Deno does not always end a body that is being read when the request's signal aborts).
 */
export async function watchLoop(
  c: BenchCluster,
  path: string,
  label: string,
  signal: AbortSignal,
  handlers: WatchLoopHandlers,
): Promise<void> {
  const res = await fetch(`${c.ep.server}${path}`, {
    client: c.http,
    headers: { authorization: `Bearer ${c.ep.token}` },
    signal,
  });
  if (!res.ok || !res.body) throw new Error(`${label}: ${res.status}`);
  handlers.opened?.();
  const reader = res.body.getReader();
  const onAbort = () => void reader.cancel().catch(() => {});
  signal.addEventListener("abort", onAbort, { once: true });
  const decoder = new TextDecoder();
  let buf = "";
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done || signal.aborted) return;
      const now = performance.now();
      buf += decoder.decode(value, { stream: true });
      let start = 0;
      for (let nl = buf.indexOf("\n"); nl >= 0; nl = buf.indexOf("\n", start)) {
        const line = buf.slice(start, nl);
        start = nl + 1;
        if (line.startsWith('{"type":"ERROR"')) throw new Error(`${label}: ${line.slice(0, 200)}`);
        handlers.line(line, now);
      }
      buf = buf.slice(start);
      handlers.chunk?.();
    }
  } finally {
    signal.removeEventListener("abort", onAbort);
    await reader.cancel().catch(() => {});
  }
}

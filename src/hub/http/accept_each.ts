// The accept loop of a listener whose connections are served one promise each: the connection gate and the admission
// TLS front share it.

/**
 * Accepts connections from `listener` until it is closed (`closed()` turns true, or the listener is gone), handing each
 * to `serve`, which either returns the promise of serving it or takes care of the connection itself (refused, closed)
 * and returns nothing; then calls `end` and settles once every served connection's promise did.
 *
 * Guarantees: an accept error other than the listener's end (out of file descriptors, a reset before accept) is
 * retried after 50 ms rather than spun on.
 */
export async function acceptEach(
  listener: Deno.Listener,
  closed: () => boolean,
  serve: (conn: Deno.Conn) => Promise<void> | void,
  end: () => void,
): Promise<void> {
  const running = new Set<Promise<void>>();
  while (!closed()) {
    let conn: Deno.Conn;
    try {
      conn = await listener.accept();
    } catch (err) {
      if (closed() || err instanceof Deno.errors.BadResource) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
      continue;
    }
    const serving = serve(conn);
    if (!serving) continue;
    const done: Promise<void> = serving.finally(() => running.delete(done));
    running.add(done);
  }
  end();
  while (running.size > 0) await Promise.allSettled([...running]);
}

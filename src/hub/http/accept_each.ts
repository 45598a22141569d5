// The accept loop of a listener whose connections are served one promise each, and the same loop under a connection
// cap: the connection gate and the TLS front share both.

import type { SlotTable } from "./connection_slots.ts";
import { closeQuietly } from "./socket_copy.ts";

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

/** What {@linkcode acceptCapped} does with each connection. */
export interface CappedAccept {
  /** The cap: each connection takes a slot or is refused (connection_slots.ts). */
  slots: SlotTable<Deno.Conn>;
  /**
   * Prepares one accepted connection: `serve` runs once it holds a slot; `evicted` (optional) closes what else belongs
   * to it when it is closed to make room.
   */
  admit(conn: Deno.Conn): { serve(): Promise<void>; evicted?(): void };
  /** Called for each connection closed to make room (`evicted`) or at once at the cap (`refused`), before it closes. */
  shed(reason: "evicted" | "refused"): void;
  /** Called once the loop stops accepting. */
  end(): void;
}

/**
 * {@linkcode acceptEach} under a connection cap: each accepted connection takes a slot of `o.slots` and is served, or is
 * refused (`shed("refused")`, closed at once, not waited for); a connection its slot is taken from to make room is
 * reported (`shed("evicted")`) and closed, then its `evicted` runs. The connection gate and the TLS front both accept
 * this way.
 */
export function acceptCapped(listener: Deno.Listener, closed: () => boolean, o: CappedAccept): Promise<void> {
  return acceptEach(listener, closed, (conn) => {
    const admitted = o.admit(conn);
    const evict = () => {
      o.shed("evicted");
      closeQuietly(conn);
      admitted.evicted?.();
    };
    if (o.slots.open(conn, evict)) return admitted.serve();
    o.shed("refused");
    closeQuietly(conn);
  }, o.end);
}

// Keep-alive at the connection gate: the later requests of one client connection, each head read within its
// deadline, handed on until the last one (with `connection: close`); idle connections closed between requests.

import type { SlotTable } from "./connection_slots.ts";
import { bodyLength, type ClientInput, type KeepAliveLimits, oneRequestOnly } from "./request_framing.ts";
import { closeQuietly, concat, copy, writeAll } from "./socket_copy.ts";

/** What a kept-alive connection shares with its gate. */
export interface KeepAliveContext {
  limits: Required<KeepAliveLimits>;
  /** Where the gate keeps its cap and is told what each connection is doing. */
  slots: SlotTable<Deno.Conn>;
  headerTimeoutMs: number;
  maxHeaderBytes: number;
  lifetimeMs: number;
  /** Whether the gate is ending (`close()` or `retire()`): the next request is the last. */
  ending(): boolean;
  /** Whether the gate was closed (`close()`): an idle connection closes at once. */
  closed(): boolean;
  /** Kept-alive connections waiting for their next request: each checks, when called, whether to close now. */
  idleWaiters: Set<() => void>;
  /** A head over maxHeaderBytes closed the connection. */
  shed(reason: "oversized"): void;
  /** An idle kept-alive connection was closed. */
  idleClosed(): void;
}

/** The last request's rest: what is buffered, then the client's bytes, until it ends or fails. */
export async function passRest(input: ClientInput, conn: Deno.Conn, inner: Deno.Conn): Promise<void> {
  if (input.buffered) await writeAll(inner, input.take());
  // The client's end of input does not end the exchange (the answer may still be on its way); its connection
  // failing or being closed here (lifetime, abort) does, by closing the server's side too.
  void copy(conn, inner).then((eof) => eof || closeQuietly(inner));
}

/**
 * Serves the requests of kept-alive connections for one gate (see ConnectionGate's guarantees with `keepAlive`).
 *
 * Assumptions: the server behind keeps its connection to the gate open between requests and writes each answer at
 * once, so `answered()` and the bytes seen coming back mean the answer is with the client.
 */
export class KeepAlive {
  readonly #c: KeepAliveContext;

  constructor(context: KeepAliveContext) {
    this.#c = context;
  }

  /** A request handed on: `body` while `bodyLeft` bytes of its body are still to come, else `busy`. */
  #mark(conn: Deno.Conn, bodyLeft: number): void {
    this.#c.slots.mark(conn, bodyLeft > 0 ? "body" : "busy");
  }

  /**
   * Keep-alive: hands on `head` and each later request of the connection, each head read whole within the header
   * timeout of its first byte, until the last one, which goes with `connection: close`.
   */
  async serve(
    conn: Deno.Conn,
    input: ClientInput,
    first: Uint8Array,
    upstream: { conn: Deno.Conn; answered?(): number },
    acceptedAt: number,
    state: { timedOut: boolean },
  ): Promise<void> {
    const inner = upstream.conn;
    const limits = this.#c.limits;
    let forwarded = 0;
    /** When answer bytes last came back; 0 while the last request handed on has had none. */
    let answeredAt = 0;
    /** Whether the body of the request handed on last is still arriving. */
    let inBody = false;
    const answeredAll = () => (upstream.answered?.() ?? forwarded) >= forwarded;
    // The server's answers; its end ends the exchange. An answer to a request whose body is still arriving means the
    // server will not read the rest (a refusal): the body ends there (half-close), so the server closes once its answer
    // is out, and the client's connection with it (Deno.serve keeps a connection whose request body is unfinished).
    const answers = copy(inner, conn, () => {
      answeredAt = Date.now();
      if (inBody && answeredAll()) void inner.closeWrite().catch(() => {});
    }).then(() => closeQuietly(conn));
    // Between requests (the server answered every request handed on, and bytes came back since): for how long.
    const idleFor = () => answeredAt && answeredAll() ? Date.now() - answeredAt : undefined;
    /** Passes `n` body bytes on; false when either side failed inside it (the body is ended: the answer may come). */
    const body = async (n: number): Promise<boolean> => {
      inBody = n > 0;
      const whole = await input.pipe(n, (bytes) => writeAll(inner, bytes)).then(() => true, () => false);
      inBody = false;
      if (!whole) await inner.closeWrite().catch(() => {});
      else this.#mark(conn, 0);
      return whole;
    };
    let head = first;
    for (let served = 1;; served++) {
      const length = bodyLength(head);
      // The last request is handed on before a third of the lifetime, so it has two thirds to be answered.
      const last = length === undefined || served >= limits.maxRequests || this.#c.ending() ||
        Date.now() - acceptedAt >= this.#c.lifetimeMs / 3;
      if (last) {
        this.#mark(conn, length === undefined ? 1 : length - Math.min(length, input.buffered));
        await writeAll(inner, oneRequestOnly(head));
        forwarded++;
        answeredAt = 0;
        // A body of known length is passed on as such (then `busy`); an unknown one is copied to the end (`body`).
        if (length === undefined || await body(length)) await passRest(input, conn, inner);
        break;
      }
      // The head with the body bytes already read, in one write: a head alone, then a small body, waits out the
      // peer's delayed ACK (about 40 ms) where Nagle's algorithm is on.
      const first = input.take(Math.min(length, input.buffered));
      this.#mark(conn, length - first.length);
      await writeAll(inner, concat(head, first));
      forwarded++;
      answeredAt = 0;
      if (!(await body(length - first.length))) break;
      const next = await this.#nextHead(conn, input, idleFor, state);
      if (next === null || next === "oversized") {
        if (next === "oversized") this.#c.shed("oversized");
        closeQuietly(inner);
        break;
      }
      head = next;
    }
    await answers;
  }

  /**
   * The connection's next head: waits for its first byte, closing the connection once idle for `idleTimeoutMs` since
   * its last answer (at once when the gate closes), then reads it within the header timeout; null when the client left or was closed.
   */
  async #nextHead(
    conn: Deno.Conn,
    input: ClientInput,
    idleFor: () => number | undefined,
    state: { timedOut: boolean },
  ): Promise<Uint8Array | "oversized" | null> {
    if (!input.buffered) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const limit = this.#c.limits.idleTimeoutMs;
      // Closes once idle for the limit (at once after close()); until answered, looks again every 50 ms.
      const check = () => {
        const idle = idleFor();
        clearTimeout(timer);
        if (idle !== undefined) this.#c.slots.mark(conn, "idle");
        if (idle !== undefined && (this.#c.closed() || idle >= limit)) {
          this.#c.idleClosed();
          closeQuietly(conn);
        } else timer = setTimeout(check, idle === undefined || this.#c.closed() ? 50 : limit - idle);
      };
      check();
      this.#c.idleWaiters.add(check);
      try {
        if (!(await input.fill())) return null;
      } catch {
        return null;
      } finally {
        clearTimeout(timer);
        this.#c.idleWaiters.delete(check);
      }
    }
    const headTimer = setTimeout(() => {
      state.timedOut = true;
      closeQuietly(conn);
    }, this.#c.headerTimeoutMs);
    try {
      return await input.head(this.#c.maxHeaderBytes);
    } finally {
      clearTimeout(headTimer);
    }
  }
}

// One request's cancellation: the caller's signal, the client's close() and a timer, without an AbortController unless asked.

import type { Clock, Timer } from "../../util/mod.ts";
import type { Abortable } from "./_http1.ts";

/** Why a request was aborted. */
export type AbortWhy = "caller" | "timeout" | "deadline" | "closed";

/** One request's cancellation: the caller's signal, the client's close, and a timer. */
export class Call implements Abortable {
  /** Made only when a fetch transport asks for `signal`; our own sockets use the hooks. */
  #controller: AbortController | undefined;
  #reason: unknown;
  readonly #clock: Clock;
  readonly #caller: AbortSignal | undefined;
  readonly #live: Set<Call>;
  #why: AbortWhy | undefined;
  #timer: Timer | undefined;
  #armedWhy: AbortWhy = "timeout";
  /** Run once on abort: rejections of raced promises, socket closes (plain functions, no EventTarget). */
  #hooks: (() => void)[] | undefined;
  armedMs = 0;
  readonly #onCaller = () => this.#abort("caller");

  /** Registers itself in `live` (the client's requests in flight) until `end()`. */
  constructor(clock: Clock, caller: AbortSignal | undefined, live: Set<Call>) {
    this.#clock = clock;
    this.#caller = caller;
    this.#live = live;
    live.add(this);
    if (caller?.aborted) this.#abort("caller");
    else caller?.addEventListener("abort", this.#onCaller, { once: true });
  }

  get signal(): AbortSignal {
    if (!this.#controller) {
      this.#controller = new AbortController();
      if (this.#why) this.#controller.abort(this.#reason);
    }
    return this.#controller.signal;
  }

  /** Why the request was aborted, if it was. */
  get why(): AbortWhy | undefined {
    return this.#why;
  }

  /** Aborted by the caller's own signal (a read of `why` TypeScript does not narrow away). */
  get byCaller(): boolean {
    return this.#why === "caller";
  }

  /** The abort reason once aborted (Abortable). */
  get aborted(): unknown {
    return this.#why ? this.#reason : undefined;
  }

  onAbort(fn: () => void): void {
    if (!this.#why) (this.#hooks ??= []).push(fn);
  }

  get callerReason(): unknown {
    return this.#caller?.reason ?? new DOMException("The operation was aborted", "AbortError");
  }

  /** Aborts the request `ms` from now, replacing any earlier timer. */
  arm(ms: number, why: "timeout" | "deadline"): void {
    this.#timer?.cancel();
    this.armedMs = ms;
    this.#armedWhy = why;
    this.#timer = this.#clock.setTimer(ms, () => this.#abort(this.#armedWhy));
  }

  disarm(): void {
    this.#timer?.cancel();
    this.#timer = undefined;
  }

  /** The client closed: abort. */
  close(): void {
    this.#abort("closed");
  }

  /** Resolves like `p`, or rejects with the abort reason as soon as the call is aborted. */
  race<T>(p: Promise<T>): Promise<T> {
    if (this.#why) return Promise.reject(this.#reason);
    return new Promise<T>((resolve, reject) => {
      this.onAbort(() => reject(this.#reason));
      p.then(resolve, reject);
    });
  }

  /** Releases the timer and listeners. */
  end(): void {
    this.disarm();
    this.#caller?.removeEventListener("abort", this.#onCaller);
    this.#live.delete(this);
    this.#hooks = undefined;
  }

  #abort(why: AbortWhy): void {
    if (this.#why) return;
    this.#why = why;
    this.#reason = why === "caller" ? this.callerReason : new DOMException(`request ${why}`, "AbortError");
    this.#controller?.abort(this.#reason);
    const hooks = this.#hooks;
    this.#hooks = undefined;
    for (const fn of hooks ?? []) fn();
  }
}

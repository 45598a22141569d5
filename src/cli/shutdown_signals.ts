// SIGTERM and SIGINT as one abort signal: what stops a running hub, and the listeners removed when it is done.

import type { Logger } from "../util/mod.ts";

/**
 * Listens for SIGTERM and SIGINT from construction until disposal.
 *
 * Guarantees:
 * - the first of them logs `shutting down` with the signal's name and aborts `signal`; later ones do nothing;
 * - disposal removes both listeners and aborts `signal` if nothing did (a failed start stops what it had started).
 */
export class ShutdownSignals implements Disposable {
  readonly #stop = new AbortController();
  readonly #listeners: [Deno.Signal, () => void][];

  constructor(logger: Logger) {
    const onSignal = (sig: Deno.Signal) => () => {
      if (this.#stop.signal.aborted) return;
      logger.info("shutting down", { signal: sig });
      this.#stop.abort();
    };
    this.#listeners = (["SIGTERM", "SIGINT"] as const).map((sig) => [sig, onSignal(sig)]);
    for (const [sig, listener] of this.#listeners) Deno.addSignalListener(sig, listener);
  }

  /** Aborted by the first SIGTERM or SIGINT, or by disposal. */
  get signal(): AbortSignal {
    return this.#stop.signal;
  }

  [Symbol.dispose](): void {
    for (const [sig, listener] of this.#listeners) Deno.removeSignalListener(sig, listener);
    this.#stop.abort();
  }
}

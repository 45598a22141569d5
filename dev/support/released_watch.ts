// Test support: an in-process list/watch client (the shape of src/runtime/cache/watcher.ts's ListWatchClient) that
// lists fixed items and streams fixed events once the test releases them, for the informer's and the watch-to-queue
// unit tests.

import type { WatchEvent } from "../../src/kube/mod.ts";
import type { ListWatchClient } from "../../src/runtime/mod.ts";

/**
 * Lists `items` at resourceVersion "10", then streams `events` once the test calls `releaseEvents()`, then holds the
 * stream open until its signal aborts; `lists` counts the list calls.
 */
export class ReleasedWatchClient implements ListWatchClient {
  lists = 0;
  #release: () => void = () => {};
  readonly #released = new Promise<void>((resolve) => this.#release = resolve);
  constructor(private items: unknown[], private events: WatchEvent[]) {}

  releaseEvents(): void {
    this.#release();
  }

  resetConnections(): void {}

  listPage(): ReturnType<ListWatchClient["listPage"]> {
    this.lists++;
    return Promise.resolve({ items: this.items, resourceVersion: "10" });
  }

  watch(_path: string, opts: { signal?: AbortSignal; onOpen?: () => void }): AsyncIterable<WatchEvent> {
    const { events } = this;
    const released = this.#released;
    return (async function* () {
      opts.onOpen?.();
      await released;
      for (const ev of events) if (!opts.signal?.aborted) yield ev;
      await new Promise<void>((resolve) => {
        if (opts.signal?.aborted) resolve();
        else opts.signal?.addEventListener("abort", () => resolve(), { once: true });
      });
    })();
  }
}

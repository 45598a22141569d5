// The Mirror bench's independent observer: a label-selected watch of the copies in one target cluster that records
// when each value of each copy first arrived, and wakes whoever waits for it.

import type { BenchCluster } from "../lib/cluster.ts";
import { watchLoop } from "../lib/watch_loop.ts";

/** Hang guard for one propagation: they take tens of milliseconds; minutes mean something is broken. */
export const HANG_GUARD_MS = 120_000;
const COPY_LABEL = "operator-hub.dev/mirror=copy";
const CONFIGMAPS_PATH = (ns: string) => `/api/v1/namespaces/${ns}/configmaps`;

/** Every value each copy showed in one target cluster, with when it first arrived (performance.now()). */
export class CopyWatch {
  readonly arrivals = new Map<string, Map<string, number>>();
  /** Who waits for which `name`/`value`: woken by the event, not by polling (a burst has a thousand waiters). */
  readonly #waiters = new Map<string, (() => void)[]>();
  readonly #abort = new AbortController();
  readonly #done: Promise<void>;
  /** Rejects when the watch fails (never resolves). */
  readonly #failed: Promise<never>;

  constructor(readonly cluster: BenchCluster, ns: string) {
    let fail: (err: unknown) => void = () => {};
    this.#failed = new Promise<never>((_, reject) => fail = reject);
    this.#failed.catch(() => {}); // observed by waitValue; unobserved when nobody waits
    this.#done = this.#run(ns).catch((err) => {
      if (!this.#abort.signal.aborted) fail(new Error(`${this.cluster.name}: copy watch failed: ${err}`));
    });
  }

  /** The time `name` first showed `value`, waiting for it up to the hang guard. */
  async waitValue(name: string, value: string): Promise<number> {
    const at = this.arrivals.get(name)?.get(value);
    if (at !== undefined) return at;
    const key = `${name}\0${value}`;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const guard = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () =>
          reject(new Error(`${this.cluster.name}: copy ${name} never showed v=${value} within ${HANG_GUARD_MS} ms`)),
        HANG_GUARD_MS,
      );
    });
    const seen = new Promise<void>((resolve) => {
      const list = this.#waiters.get(key) ?? [];
      list.push(resolve);
      this.#waiters.set(key, list);
    });
    try {
      await Promise.race([seen, guard, this.#failed]);
    } finally {
      clearTimeout(timer);
    }
    return this.arrivals.get(name)!.get(value)!;
  }

  async #run(ns: string): Promise<void> {
    const c = this.cluster;
    const selector = `labelSelector=${encodeURIComponent(COPY_LABEL)}`;
    const list = await c.request("GET", `${CONFIGMAPS_PATH(ns)}?${selector}`);
    for (const o of list.items ?? []) this.#record(o, performance.now());
    const path = `${CONFIGMAPS_PATH(ns)}?${selector}&watch=true&resourceVersion=${list.metadata.resourceVersion}` +
      `&timeoutSeconds=3600`;
    await watchLoop(c, path, "watch", this.#abort.signal, {
      line: (line, now) => {
        const ev = JSON.parse(line);
        if (ev.type === "ADDED" || ev.type === "MODIFIED") this.#record(ev.object, now);
      },
    });
  }

  // deno-lint-ignore no-explicit-any -- a ConfigMap from the watch
  #record(o: any, now: number): void {
    const name = o.metadata.name as string;
    const v = o.data?.v;
    if (typeof v !== "string") return;
    let values = this.arrivals.get(name);
    if (!values) this.arrivals.set(name, values = new Map());
    if (values.has(v)) return;
    values.set(v, now);
    const key = `${name}\0${v}`;
    for (const wake of this.#waiters.get(key) ?? []) wake();
    this.#waiters.delete(key);
  }

  async stop(): Promise<void> {
    this.#abort.abort();
    await this.#done;
  }
}

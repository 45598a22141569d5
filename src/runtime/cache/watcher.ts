// The list-then-watch loop for one resource in one cluster: relists on 410, reconnects with backoff,
// and aborts silent streams with an inactivity watchdog.

import { failureStateOf, httpStatusOf, retryAfterMsOf, type WatchEvent } from "../../kube/mod.ts";
import type { QueuePriority } from "../../queue/mod.ts";
import { Backoff, type BackoffOptions, type Clock, errorText, type Logger, SystemClock } from "../../util/mod.ts";
import type { WatchPhase } from "../health_state.ts";
import type { Store } from "./store.ts";

/** What the watcher needs from a cluster client (the kube layer's KubeClient fits). */
export interface ListWatchClient {
  listPage(path: string, options: { limit?: number; continueToken?: string; signal?: AbortSignal }): Promise<{
    items: unknown[];
    resourceVersion: string;
    continueToken?: string;
  }>;
  watch(path: string, options: {
    resourceVersion: string;
    timeoutSeconds: number;
    allowWatchBookmarks?: boolean;
    signal?: AbortSignal;
    /** Called once the server accepted the watch (2xx headers), before any event arrives. */
    onOpen?: () => void;
  }): AsyncIterable<WatchEvent>;
  /**
   * Makes the next request use a new connection (the watchdog calls it: the current one may be half-open). With
   * `quietMs`, the stream was silent that long: a connection shared with other streams that received anything within
   * it is alive and may be kept.
   */
  resetConnections?(quietMs?: number): void;
  /** Whether the connection the watch is on is alive (an HTTP/2 PING answered); absent where it cannot tell. */
  confirmAlive?(quietMs: number, timeoutMs: number): Promise<boolean>;
}

/** What a watchdog asks of a client's connections; a wrapping client passes them on with {@link connectionHooks}. */
export type ConnectionHooks = Pick<ListWatchClient, "resetConnections" | "confirmAlive">;

/** The connection hooks of `client`, for a client that wraps it. */
export function connectionHooks(client: ConnectionHooks): ConnectionHooks {
  return {
    resetConnections: (quietMs) => client.resetConnections?.(quietMs),
    ...(client.confirmAlive ? { confirmAlive: (q: number, t: number) => client.confirmAlive!(q, t) } : {}),
  };
}

/** A ListWatchClient whose list and watch also take a label selector (the kube layer's KubeClient fits). */
export interface SelectableListWatchClient extends ConnectionHooks {
  listPage(
    path: string,
    options: { limit?: number; continueToken?: string; signal?: AbortSignal; labelSelector?: string },
  ): ReturnType<ListWatchClient["listPage"]>;
  watch(
    path: string,
    options: Parameters<ListWatchClient["watch"]>[1] & { labelSelector?: string },
  ): AsyncIterable<WatchEvent>;
}

/** `client` with every list and watch restricted to objects matching the label `selector` (`key=value,…`). */
export function labelled(client: SelectableListWatchClient, selector: string): ListWatchClient {
  return {
    listPage: (path, options) => client.listPage(path, { ...options, labelSelector: selector }),
    watch: (path, options) => client.watch(path, { ...options, labelSelector: selector }),
    ...connectionHooks(client),
  };
}

export interface WatchSnapshot {
  phase: WatchPhase;
  synced: boolean;
  resourceVersion?: string;
  /** When the last byte of progress (event, bookmark, list page) arrived. */
  lastEventAt?: number;
  /** When the loop last did anything at all; a stale value means the loop is wedged. */
  heartbeatAt: number;
  lastError: string | null;
  connectAttempts: number;
  relists: number;
  watchdogAborts: number;
}

export interface WatcherOptions {
  /** Path of the collection, e.g. /apis/demo.operator/v1/uuid. */
  path: string;
  client: ListWatchClient;
  store: Store;
  /** Set when `path` lists one namespace, so a relist only forgets objects of that namespace. */
  namespace?: string;
  /**
   * Called with the store keys that changed: at priority `low` for what a list found (the first list, a relist after
   * a 410 or a reconnect), at `live` for watch events, so a relist of many objects waits behind live changes.
   */
  onChange(keys: string[], priority: QueuePriority): void;
  /**
   * Called after every complete list, before `onChange` of the keys it changed: the store then holds the cluster's
   * objects, even when the list was empty or changed nothing (so `onChange` alone would never say so).
   */
  onSynced?(): void;
  clock?: Clock;
  logger?: Logger;
  backoff?: BackoffOptions;
  pageSize?: number;
  /** A stream silent for this long is presumed half-open and reopened. Default 90 s. */
  idleTimeoutMs?: number;
  /** Server-side watch timeout is drawn uniformly from this range, in seconds. Default 300..600. */
  watchTimeoutSeconds?: [number, number];
  random?: () => number;
}

/** Raised inside the loop to restart from a fresh list. */
class GoneError extends Error {
  override name = "GoneError";
}

/** Raised by the watchdog to reopen a silent stream. */
class StreamStalledError extends Error {
  override name = "StreamStalledError";
}

/**
 * Keeps `store` equal to the cluster's objects at `path`.
 *
 * Guarantees:
 * - never gives up and never spins: every failure waits a jittered, growing delay (800 ms..30 s by
 *   default) that starts over after two minutes without failures; a failure that carries the server's
 *   Retry-After (a 429 while its cache initialises after a restart) waits that long instead (at least
 *   the initial delay, at most the maximum), so a server that is back is not left idle for 30 s;
 * - after a failure, the phase reads `watching` again only once the server answered (a list, an
 *   accepted watch or an event), never while a reconnect is still in flight;
 * - a 410 Gone, as an HTTP status or as an in-stream ERROR event, leads to a relist whose diff is
 *   reported through `onChange`, so deletions during a gap are seen;
 * - a stream with no event or bookmark for `idleTimeoutMs` is aborted and reopened over a new
 *   connection (`resetConnections`), since the silent one may be half-open (a connection other streams share is kept
 *   while they received anything within the same quiet spell: it is alive); unless the client confirms the connection
 *   alive (`confirmAlive`: an HTTP/2 PING answered within half the timeout, at most 10 s), which keeps the stream;
 * - a list page the client refuses as too large (`too-large`) is asked for again with half the objects, down to
 *   one, so a collection of objects each under the client's cap is always listed with at most one page of it held;
 *   a single object or watch event over the cap puts the phase in `too-large`, and the loop relists after the backoff.
 *
 * Assumptions: the apiserver sends bookmarks (about once a minute), so a healthy idle stream is
 * never silent for longer than the idle timeout's default.
 */
export class Watcher {
  readonly #o: WatcherOptions;
  readonly #clock: Clock;
  readonly #backoff: Backoff;
  readonly #random: () => number;
  readonly #snap: WatchSnapshot;

  constructor(options: WatcherOptions) {
    this.#o = options;
    this.#clock = options.clock ?? new SystemClock();
    this.#random = options.random ?? Math.random;
    this.#backoff = new Backoff({ random: this.#random, ...options.backoff });
    this.#snap = {
      phase: "connecting",
      synced: false,
      heartbeatAt: this.#clock.now(),
      lastError: null,
      connectAttempts: 0,
      relists: 0,
      watchdogAborts: 0,
    };
  }

  snapshot(): WatchSnapshot {
    return { ...this.#snap };
  }

  /** The store this watcher keeps equal to the cluster's objects (shared by the watchers of one resource). */
  get store(): Store {
    return this.#o.store;
  }

  /** Runs until `signal` aborts; settles once every request and timer is gone. */
  async start(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      this.#beat();
      try {
        if (this.#snap.resourceVersion === undefined) await this.#relist(signal);
        await this.#watchOnce(signal);
      } catch (err) {
        if (signal.aborted) break;
        if (err instanceof GoneError || httpStatusOf(err) === 410) {
          this.#o.logger?.info("resourceVersion too old, relisting", { resourceVersion: this.#snap.resourceVersion });
          this.#snap.resourceVersion = undefined;
          continue;
        }
        const delay = this.#delayAfter(err);
        const phase = err instanceof StreamStalledError ? "connecting" : failureStateOf(err);
        // An event over the size limit would come back on a watch resumed from the same resourceVersion: list afresh.
        if (phase === "too-large") this.#snap.resourceVersion = undefined;
        const message = errorText(err);
        this.#snap.phase = phase;
        this.#snap.lastError = message;
        this.#o.logger?.warn("watch failed, retrying", { phase, error: message, retryInMs: delay });
        await this.#clock.sleep(delay, signal);
      }
    }
  }

  #delayAfter(err: unknown): number {
    const retryAfter = retryAfterMsOf(err);
    if (retryAfter === undefined) return this.#backoff.next(this.#clock.now());
    const min = this.#o.backoff?.initialMs ?? 800;
    const max = this.#o.backoff?.maxMs ?? 30_000;
    return Math.round(Math.min(max, Math.max(min, retryAfter)) * (1 + 0.2 * this.#random()));
  }

  #beat(): void {
    this.#snap.heartbeatAt = this.#clock.now();
  }

  #progress(): void {
    const now = this.#clock.now();
    this.#snap.heartbeatAt = now;
    this.#snap.lastEventAt = now;
  }

  async #relist(signal: AbortSignal): Promise<void> {
    const { client, path, store } = this.#o;
    if (!this.#snap.synced) this.#snap.phase = "syncing";
    this.#snap.connectAttempts++;
    const relist = store.startRelist(this.#o.namespace);
    let continueToken: string | undefined;
    let resourceVersion = "";
    let limit = this.#o.pageSize ?? 500;
    for (;;) {
      let page: Awaited<ReturnType<ListWatchClient["listPage"]>>;
      try {
        page = await client.listPage(path, { limit, continueToken, signal });
      } catch (err) {
        // A page over the client's size cap: ask again for half as many objects (the continue token works with any
        // limit), down to one; only a single object over the cap is a failure. The smaller pages serve this relist.
        if (limit === 1 || signal.aborted || failureStateOf(err) !== "too-large") throw err;
        limit = Math.max(1, Math.floor(limit / 2));
        this.#o.logger?.info("list page over the size limit, asking for fewer objects", { limit });
        this.#beat();
        continue;
      }
      for (const raw of page.items) relist.add(raw as Record<string, unknown>);
      continueToken = page.continueToken;
      resourceVersion = page.resourceVersion;
      this.#progress();
      if (!continueToken) break;
    }
    const changed = relist.finish();
    this.#snap.resourceVersion = resourceVersion;
    this.#snap.relists++;
    this.#snap.synced = true;
    this.#snap.lastError = null;
    this.#snap.phase = "watching"; // the server just answered; the watch request follows at once
    this.#o.logger?.info("listed", { objects: store.size, changed: changed.length, resourceVersion });
    this.#o.onSynced?.();
    if (changed.length) this.#o.onChange(changed, "low");
  }

  async #watchOnce(signal: AbortSignal): Promise<void> {
    const { client, path, store } = this.#o;
    const [lo, hi] = this.#o.watchTimeoutSeconds ?? [300, 600];
    const idle = this.#o.idleTimeoutMs ?? 90_000;
    const stream = new AbortController();
    const onAbort = () => stream.abort();
    signal.addEventListener("abort", onAbort, { once: true });
    let stalled = false;
    let lastActivity = this.#clock.now();
    // The watchdog is due `idle` after the last activity: one timer per quiet spell (an idle watch's bookmark about
    // once a minute moves it on once), not a re-arm every fraction of `idle`.
    const stall = (quiet: number) => {
      if (stream.signal.aborted) return;
      stalled = true;
      // A silent stream is most likely a half-open connection: never send the reconnect over it.
      client.resetConnections?.(quiet);
      stream.abort();
    };
    const check = () => {
      const quiet = this.#clock.now() - lastActivity;
      if (quiet < idle) {
        timer = this.#clock.setTimer(Math.max(1, idle - quiet), check);
        return;
      }
      // On a shared HTTP/2 connection that answers a PING, the stream is only quiet (the server had nothing to say):
      // it is kept, as client-go keeps it, instead of paying a reopen (and a new connection) per quiet watch.
      const alive = client.confirmAlive?.(quiet, Math.min(10_000, Math.max(1, idle / 2)));
      if (!alive) return stall(quiet);
      alive.then((yes) => {
        if (stream.signal.aborted) return;
        if (!yes) return stall(this.#clock.now() - lastActivity);
        lastActivity = this.#clock.now();
        timer = this.#clock.setTimer(Math.max(1, idle), check);
      }, () => stall(this.#clock.now() - lastActivity));
    };
    let timer = this.#clock.setTimer(Math.max(1, idle), check);
    const openedAt = this.#clock.now();
    let events = 0;
    this.#snap.connectAttempts++;
    const opened = () => {
      this.#snap.phase = "watching";
      this.#snap.lastError = null;
    };
    try {
      const iterable = client.watch(path, {
        resourceVersion: this.#snap.resourceVersion!,
        timeoutSeconds: Math.floor(lo + (hi - lo) * this.#random()),
        allowWatchBookmarks: true,
        signal: stream.signal,
        onOpen: opened,
      });
      let batch: string[] = [];
      for await (const ev of iterable) {
        if (events === 0) opened();
        events++;
        this.#progress();
        lastActivity = this.#snap.lastEventAt!;
        switch (ev.type) {
          case "ADDED":
          case "MODIFIED":
            batch.push(store.upsert(ev.object));
            break;
          case "DELETED":
            batch.push(store.delete(ev.object));
            break;
          case "BOOKMARK":
            break;
          case "ERROR": {
            const code = ev.object?.code;
            if (code === 410) throw new GoneError(`watch expired: ${ev.object?.message ?? "410 Gone"}`);
            throw Object.assign(new Error(`watch ERROR event: ${ev.object?.message ?? JSON.stringify(ev.object)}`), {
              status: typeof code === "number" ? code : undefined,
            });
          }
        }
        const rv = ev.object?.metadata?.resourceVersion;
        if (rv) this.#snap.resourceVersion = rv;
        if (batch.length) {
          this.#o.onChange(batch, "live");
          batch = [];
        }
      }
      if (stalled) throw new StreamStalledError(`watch stream silent for ${idle} ms; reconnecting`);
      // A stream the server closes at once, over and over, would spin: treat it as a failure.
      if (events === 0 && this.#clock.now() - openedAt < 1000 && !signal.aborted) {
        throw new Error("watch stream closed immediately by the server");
      }
    } catch (err) {
      if (stalled && !signal.aborted) {
        this.#snap.watchdogAborts++;
        throw new StreamStalledError(`watch stream silent for ${idle} ms; reconnecting`, { cause: err });
      }
      throw err;
    } finally {
      timer.cancel();
      signal.removeEventListener("abort", onAbort);
      stream.abort();
    }
  }
}

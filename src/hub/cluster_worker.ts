// One engaged cluster: its client, store, pre-flight checks and watchers, from connect to full stop.

import {
  type ClusterAccess,
  describePermission,
  KubeClient,
  missingPermissions,
  type PermissionCheck,
  resourcePath,
} from "../kube/mod.ts";
import type { TokenBucket } from "../queue/mod.ts";
import {
  type ApiClient,
  type ClusterContext,
  type EventLevel,
  EventRecorder,
  type Operator,
  phaseFor,
  retryAfterMsOf,
  Store,
  Watcher,
  type WatchPhase,
  type WatchSnapshot,
} from "../runtime/mod.ts";
import { Backoff, type Clock, errorText, type Logger, SystemClock } from "../util/mod.ts";

/**
 * A cluster's state for health: the watch phases plus `forbidden` for failed RBAC pre-flight, and `registering` from
 * registration until the first pre-flight attempt (or while a registration problem keeps it from being engaged).
 */
export interface ClusterHealth {
  state: WatchPhase | "registering";
  synced: boolean;
  objects: number;
  queue: number;
  lastEventAgeSeconds: number | null;
  lastError: string | null;
  connectAttempts: number;
  relists: number;
  watchdogAborts: number;
  missingPermissions: string[];
  wedged: boolean;
  /** Which provider registered the cluster (`flag`, `folder`, `secret`), when the hub was told. */
  provider?: string;
  /** When it was registered, ISO-8601. */
  registeredAt?: string;
}

export interface ClusterWorkerOptions {
  operator: Operator;
  /** Namespaces to watch; empty means all. */
  namespaces: string[];
  /** Permissions checked in pre-flight besides the operator's, as given (e.g. the leader-election Lease's). */
  extraPermissions?: PermissionCheck[];
  /** Called with `namespace/name` keys whose objects changed. */
  onChange(cluster: string, keys: string[]): void;
  /** This cluster's API budget, spent by every request a reconciler makes. */
  apiBudget: TokenBucket;
  eventLevel?: EventLevel;
  idleTimeoutMs?: number;
  requestTimeoutMs?: number;
  pageSize?: number;
  /** Offer HTTP/2 to the API server instead of HTTP/1.1 keep-alive (see KubeClientOptions.http2). */
  http2?: boolean;
  clock?: Clock;
  logger: Logger;
  onResponse?(info: { method: string; code: number | "error"; durationMs: number }): void;
}

/**
 * Runs everything one cluster needs.
 *
 * Guarantees: `start` settles only after every watcher stopped and the HTTP client is closed, so a
 * disengaged cluster leaves no socket or timer behind. Failures never escape: they become the
 * cluster's state and are retried with backoff, so one bad cluster never affects another.
 */
export class ClusterWorker {
  readonly name: string;
  readonly store: Store;
  readonly #o: ClusterWorkerOptions;
  readonly #clock: Clock;
  readonly #client: KubeClient;
  readonly #log: Logger;
  readonly #context: ClusterContext;
  #watchers: Watcher[] = [];
  #preflight: { phase: WatchPhase; error: string | null; missing: string[]; attempts: number; at: number } | null;

  constructor(name: string, access: ClusterAccess, options: ClusterWorkerOptions) {
    this.name = name;
    this.#o = options;
    this.#clock = options.clock ?? new SystemClock();
    this.#log = options.logger.child({ cluster: name });
    this.#client = new KubeClient(access, {
      clock: this.#clock,
      requestTimeoutMs: options.requestTimeoutMs,
      onResponse: options.onResponse,
      logger: this.#log,
      userAgent: "operator-hub",
      http2: options.http2,
    });
    this.store = new Store(options.operator.project);
    const api = budgeted(this.#client, options.apiBudget);
    this.#context = {
      name,
      store: this.store,
      api,
      events: new EventRecorder({
        api,
        component: "operator-hub",
        minLevel: options.eventLevel,
        clock: this.#clock,
        logger: this.#log,
      }),
    };
    this.#preflight = { phase: "connecting", error: null, missing: [], attempts: 0, at: this.#clock.now() };
  }

  get context(): ClusterContext {
    return this.#context;
  }

  /** Pre-flight, then watch until `signal` aborts; closes the client before settling. */
  async start(signal: AbortSignal): Promise<void> {
    try {
      const ok = await this.#runPreflight(signal);
      if (!ok) return;
      const { group, version, plural } = this.#o.operator.resource;
      const scopes = this.#o.namespaces.length ? this.#o.namespaces : [undefined];
      this.#watchers = scopes.map((namespace) =>
        new Watcher({
          path: resourcePath({ group, version, plural, namespace }),
          namespace,
          client: this.#client,
          store: this.store,
          onChange: (keys) => this.#changed(keys),
          clock: this.#clock,
          logger: this.#log,
          idleTimeoutMs: this.#o.idleTimeoutMs,
          pageSize: this.#o.pageSize,
        })
      );
      this.#preflight = null;
      await Promise.all(this.#watchers.map((w) => w.start(signal)));
    } finally {
      this.#client.close();
      this.#o.operator.forget?.(this.name);
    }
  }

  /** Passes changed keys on, minus objects the operator says need nothing (its level-based pre-check). */
  #changed(keys: string[]): void {
    const needs = this.#o.operator.needsReconcile;
    if (!needs) return this.#o.onChange(this.name, keys);
    const wanted = keys.filter((k) => {
      const obj = this.store.get(k);
      return obj === undefined || needs(obj);
    });
    if (wanted.length) this.#o.onChange(this.name, wanted);
  }

  /** Discovery and RBAC checks, retried with backoff until they pass or `signal` aborts. */
  async #runPreflight(signal: AbortSignal): Promise<boolean> {
    const backoff = new Backoff({ initialMs: 1000, maxMs: 30_000 });
    const p = this.#preflight!;
    let retryAfterMs: number | undefined;
    while (!signal.aborted) {
      retryAfterMs = undefined;
      p.attempts++;
      p.at = this.#clock.now();
      try {
        const prep = await this.#o.operator.prepare(this.#context, signal);
        const checks = [
          ...(this.#o.namespaces.length
            ? this.#o.namespaces.flatMap((namespace) => prep.permissions.map((c) => ({ ...c, namespace })))
            : prep.permissions),
          ...(this.#o.extraPermissions ?? []),
        ];
        const missing = await missingPermissions(this.#client, checks, signal);
        if (missing.length === 0) return true;
        p.phase = "forbidden";
        p.missing = missing.map(describePermission);
        p.error = `missing RBAC permissions: ${p.missing.join("; ")}`;
      } catch (err) {
        if (signal.aborted) break;
        p.phase = phaseFor(err);
        p.missing = [];
        p.error = errorText(err);
        retryAfterMs = retryAfterMsOf(err);
      }
      // A server that says when to come back (429/503 Retry-After while it starts) is believed, within bounds.
      const delay = retryAfterMs === undefined
        ? backoff.next(this.#clock.now())
        : Math.min(30_000, Math.max(1000, retryAfterMs));
      this.#log.error("cluster pre-flight failed", { state: p.phase, error: p.error, retryInMs: delay });
      await this.#clock.sleep(delay, signal);
    }
    return false;
  }

  /** The cluster's health; `queueDepth` comes from the shared queue. */
  health(queueDepth: number, wedgedAfterMs: number): ClusterHealth {
    const now = this.#clock.now();
    const base = {
      objects: this.store.size,
      queue: queueDepth,
      missingPermissions: [] as string[],
    };
    const p = this.#preflight;
    if (p) {
      return {
        ...base,
        state: p.phase,
        synced: false,
        lastEventAgeSeconds: null,
        lastError: p.error,
        connectAttempts: p.attempts,
        relists: 0,
        watchdogAborts: 0,
        missingPermissions: p.missing,
        wedged: false,
      };
    }
    const snaps: WatchSnapshot[] = this.#watchers.map((w) => w.snapshot());
    const worst = snaps.find((s) => s.phase !== "watching") ?? snaps[0];
    const lastEventAt = Math.max(...snaps.map((s) => s.lastEventAt ?? -Infinity));
    return {
      ...base,
      state: worst?.phase ?? "connecting",
      synced: snaps.length > 0 && snaps.every((s) => s.synced),
      lastEventAgeSeconds: Number.isFinite(lastEventAt) ? Math.round((now - lastEventAt) / 100) / 10 : null,
      lastError: snaps.map((s) => s.lastError).find((e) => e) ?? null,
      connectAttempts: snaps.reduce((n, s) => n + s.connectAttempts, 0),
      relists: snaps.reduce((n, s) => n + s.relists, 0),
      watchdogAborts: snaps.reduce((n, s) => n + s.watchdogAborts, 0),
      wedged: snaps.some((s) => now - s.heartbeatAt > wedgedAfterMs),
    };
  }
}

/** Wraps a client so every request first spends a token from the cluster's budget. */
function budgeted(client: KubeClient, budget: TokenBucket): ApiClient {
  return {
    async request<T>(method: string, path: string, options: Parameters<ApiClient["request"]>[2] = {}): Promise<T> {
      await budget.wait(options.signal);
      return client.request<T>(method, path, options);
    },
  };
}

// Kopf-style daemons for defineHandlers(): one long-running function per object, restarted with backoff, stopped
// (signal, then a grace period) on the object's deletion and wherever this replica stops reconciling its cluster.

import type { BackgroundTasks, ReconcileScope, Request, StoredObject } from "../runtime/mod.ts";
import { type Clock, errorText, SystemClock } from "../util/mod.ts";
import { OperatorDefinitionError } from "./operator_definition_error.ts";
import type { HandlerContext } from "./handler_context.ts";

/**
 * What a daemon gets: a handler's context whose `signal` is the daemon's own, and `sleep`.
 *
 * @example
 * ```ts
 * import type { DaemonContext } from "./daemons.ts";
 * async function heartbeat({ sleep, logger, name }: DaemonContext) {
 *   while (await sleep(5_000)) logger.info("alive", { object: name });
 * }
 * console.log(typeof heartbeat); // "function"
 * ```
 */
export interface DaemonContext<T extends StoredObject = StoredObject> extends HandlerContext<T> {
  /**
   * Aborted when the daemon must stop: its object is being deleted (or is gone), this replica stops reconciling its
   * cluster (disengaged, handed to another shard replica, paused, leadership lost), or the hub stops. The daemon then
   * has its grace period to return.
   */
  signal: AbortSignal;
  /** Waits `ms`; resolves true after it, false as soon as the daemon must stop (Kopf's `stopped.wait(ms)`). */
  sleep(ms: number): Promise<boolean>;
}

/**
 * What a daemon run may return: `{ restart: false }` ends the daemon for this object until the hub restarts; anything
 * else has it run again after its backoff.
 *
 * @example
 * ```ts
 * import type { DaemonResult } from "./daemons.ts";
 * const once = (): DaemonResult => ({ restart: false });
 * console.log(once()); // { restart: false }
 * ```
 */
export type DaemonResult = void | { restart?: boolean };

/**
 * A daemon function: runs until its `signal` aborts (or it returns, and is then run again unless it said not to).
 *
 * @example
 * ```ts
 * import type { DaemonFn } from "./daemons.ts";
 * const poll: DaemonFn = async ({ sleep, client, namespace, name }) => {
 *   while (await sleep(1_000)) if (!client.cached({ namespace, name })) return { restart: false };
 * };
 * console.log(typeof poll); // "function"
 * ```
 */
export type DaemonFn<T extends StoredObject = StoredObject> = (
  context: DaemonContext<T>,
) => Promise<DaemonResult> | DaemonResult;

/**
 * A daemon (Kopf's `@kopf.daemon`): `fn` runs once per object of the operator's resource, for as long as the object
 * exists and this replica reconciles its cluster.
 *
 * @example A daemon that checks something every 10 s until it is told to stop
 * ```ts
 * import { defineHandlers } from "../../mod.ts";
 * export const watcher = defineHandlers({
 *   name: "watcher",
 *   resource: { group: "examples.operator-hub.dev", version: "v1", kind: "Probe", plural: "probes" },
 *   daemons: {
 *     id: "probe",
 *     graceMs: 2_000,
 *     fn: async ({ sleep, logger, name }) => {
 *       while (await sleep(10_000)) logger.info("probing", { probe: name });
 *     },
 *   },
 * });
 * ```
 */
export interface DaemonSpec<T extends StoredObject = StoredObject> {
  /** The daemon. */
  fn: DaemonFn<T>;
  /** Unique among the operator's daemons. Default: the function's name, else `daemon-<index>`. */
  id?: string;
  /** How long a stopped daemon is waited for before it is logged and no longer waited for. Default 5000 ms. */
  graceMs?: number;
  /** The delay before a run that returned is started again; after a failure it doubles per failure in a row. Default 1000 ms. */
  backoffMs?: number;
  /** The longest delay between two runs after failures. Default 60 s. */
  maxBackoffMs?: number;
}

/** The default grace period of a stopped daemon (see DaemonSpec.graceMs). */
export const DAEMON_GRACE_MS = 5_000;

type ResolvedDaemon<T extends StoredObject> = Required<DaemonSpec<T>>;

/** Settles the daemons with their ids; refuses a non-function, a bad duration and duplicate ids. */
export function resolveDaemons<T extends StoredObject>(
  daemons: DaemonSpec<T> | DaemonSpec<T>[] | undefined,
): ResolvedDaemon<T>[] {
  const list = daemons === undefined ? [] : Array.isArray(daemons) ? daemons : [daemons];
  const out = list.map((d, i) => {
    if (typeof d?.fn !== "function") throw new OperatorDefinitionError(`daemon #${i}: fn must be a function`);
    for (const field of ["graceMs", "backoffMs", "maxBackoffMs"] as const) {
      const v = d[field];
      if (v !== undefined && !(typeof v === "number" && v >= 0 && Number.isFinite(v))) {
        throw new OperatorDefinitionError(`daemon #${i}: ${field} must be a number of milliseconds >= 0, got ${v}`);
      }
    }
    return {
      id: d.id ?? (d.fn.name || `daemon-${i}`),
      fn: d.fn,
      graceMs: d.graceMs ?? DAEMON_GRACE_MS,
      backoffMs: d.backoffMs ?? 1000,
      maxBackoffMs: d.maxBackoffMs ?? 60_000,
    };
  });
  const ids = out.map((d) => d.id);
  const dup = ids.find((id, i) => ids.indexOf(id) !== i);
  if (dup !== undefined) throw new OperatorDefinitionError(`two daemons share the id "${dup}": give one an \`id\``);
  return out;
}

/** Builds a handler context for `obj` from a scope (the daemon's own, bound to its signal). */
export type ContextFactory<T extends StoredObject> = (
  obj: T,
  request: Request,
  scope: ReconcileScope<T>,
) => HandlerContext<T>;

/**
 * The daemons of one operator: started from its reconciles, one task per daemon and object in `scope.background`.
 *
 * Guarantees:
 * - at most one run of a daemon per object in this replica, and only where it reconciles (the hub's background tasks
 *   are stopped wherever it stops: the shard layer frees a cluster only once they ended or their grace passed);
 * - a run that returns is started again after `backoffMs`, unless it returned `{ restart: false }` (then not again for
 *   that object until the hub restarts); a run that throws is started again after `backoffMs` doubled per failure in a
 *   row (at most `maxBackoffMs`); each run gets a context read afresh from the cache;
 * - an object being deleted, or gone, has its daemons stopped (`stopFor` settles once they ended or their grace
 *   passed), so delete handlers run after them.
 */
export class Daemons<T extends StoredObject = StoredObject> {
  readonly #daemons: ResolvedDaemon<T>[];
  readonly #context: ContextFactory<T>;
  readonly #clock: Clock;
  /** Uids of objects with a daemon running in this replica, by daemon id. */
  readonly #running = new Map<string, Set<string>>();
  /** `id/uid` of daemons that returned `{ restart: false }`. */
  readonly #finished = new Set<string>();

  constructor(daemons: ResolvedDaemon<T>[], context: ContextFactory<T>, options: { clock?: Clock } = {}) {
    this.#daemons = daemons;
    this.#context = context;
    this.#clock = options.clock ?? new SystemClock();
    for (const d of daemons) this.#running.set(d.id, new Set());
  }

  /** Whether any daemon is defined. */
  get defined(): boolean {
    return this.#daemons.length > 0;
  }

  /** True when a reconcile of `obj` would start or stop a daemon here (the hub's pre-check on each change). */
  wanted(obj: T): boolean {
    const uid = obj.metadata.uid;
    if (!uid) return false;
    if (obj.metadata.deletionTimestamp) return this.#daemons.some((d) => this.#running.get(d.id)!.has(uid));
    return this.#daemons.some((d) => !this.#running.get(d.id)!.has(uid) && !this.#finished.has(`${d.id}/${uid}`));
  }

  /**
   * Brings the object's daemons to what it needs: stopped when it is being deleted or gone (settles once they ended,
   * or their grace passed), started when it lives and none runs.
   */
  async reconcile(request: Request, scope: ReconcileScope<T>): Promise<void> {
    const tasks = scope.background;
    if (!tasks || !this.defined) return;
    const obj = scope.client.cached(request);
    if (!obj || obj.metadata.deletionTimestamp) return await this.stopFor(request, tasks);
    for (const d of this.#daemons) {
      const key = taskKey(d.id, request);
      const uid = obj.metadata.uid ?? "";
      if (this.#finished.has(`${d.id}/${uid}`)) continue;
      if (tasks.has(key)) continue;
      const running = this.#running.get(d.id)!;
      const started = tasks.start(key, async (own) => {
        running.add(uid);
        try {
          await this.#loop(d, request, uid, own as ReconcileScope<T>);
        } finally {
          running.delete(uid);
        }
      }, { graceMs: d.graceMs });
      if (started) scope.logger.debug("daemon started", { daemon: d.id });
    }
  }

  /** Stops the object's daemons; settles once they ended or their grace periods passed. */
  async stopFor(request: Request, tasks: BackgroundTasks): Promise<void> {
    await Promise.all(this.#daemons.map((d) => tasks.stop(taskKey(d.id, request))));
  }

  async #loop(d: ResolvedDaemon<T>, request: Request, uid: string, scope: ReconcileScope<T>): Promise<void> {
    const signal = scope.signal;
    const logger = scope.logger.child({ namespace: request.namespace, name: request.name, daemon: d.id });
    const sleep = async (ms: number) => {
      await this.#clock.sleep(ms, signal);
      return !signal.aborted;
    };
    let failures = 0;
    while (!signal.aborted) {
      const obj = scope.client.cached(request);
      if (!obj || obj.metadata.uid !== uid || obj.metadata.deletionTimestamp) return;
      const context: DaemonContext<T> = { ...this.#context(obj, request, { ...scope, logger }), signal, sleep };
      let result: DaemonResult = undefined;
      try {
        logger.debug("daemon run started");
        result = await d.fn(context);
        failures = 0;
      } catch (err) {
        if (signal.aborted) break;
        failures++;
        logger.warn("daemon failed; it runs again after a backoff", { error: errorText(err), failures });
      }
      if (signal.aborted) break;
      if (failures === 0 && result && result.restart === false) {
        this.#finished.add(`${d.id}/${uid}`);
        logger.info("daemon finished; not restarted for this object");
        return;
      }
      const delay = failures === 0 ? d.backoffMs : Math.min(d.maxBackoffMs, d.backoffMs * 2 ** (failures - 1));
      await sleep(delay);
    }
    logger.debug("daemon stopped");
  }
}

function taskKey(id: string, request: Request): string {
  return `${id}@${request.namespace}/${request.name}`;
}

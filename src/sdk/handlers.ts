// defineHandlers(): Kopf-style create/update/delete/resume handlers on top of the level-based reconcile API.

import { isConflict, isNotFound, type ResourceType } from "../kube/mod.ts";
import {
  type Operator,
  type ReconcileResult,
  type ReconcileScope,
  type Request,
  retryOnConflict,
  type StoredObject,
  TerminalError,
  type Verb,
} from "../runtime/mod.ts";
import type { Logger } from "../util/mod.ts";
import { defineOperator } from "./define_operator.ts";
import {
  contextFor,
  finalizersOf,
  keepHandlerFields,
  type Phase,
  resolve,
  type Resolved,
  resolveTimers,
} from "./_handler_support.ts";
import {
  diff,
  type DiffItem,
  finished,
  type HandlerOutcome,
  type HandlerState,
  STATE_FIELD,
  stateOf,
  valueAt,
} from "./handler_state.ts";

/** What a handler gets, in Kopf's spirit: the object, its parts, the diff (updates), helpers. */
export interface HandlerContext<T extends StoredObject = StoredObject> {
  /** The object as the handler found it (identity, labels, annotations, finalizers, spec, status). */
  body: T;
  /** The object's `spec` (`{}` when it has none). */
  spec: Record<string, unknown>;
  /** The object's `status` (`{}` when it has none). */
  status: Record<string, unknown>;
  /** The engaged cluster the object lives in. */
  cluster: string;
  /** The object's namespace ("" for a cluster-scoped object). */
  namespace: string;
  /** The object's name. */
  name: string;
  /** The object's uid, when the cache kept it. */
  uid: string | undefined;
  /** Update handlers: the spec the handlers last saw and the spec now (for a field handler: that field's values). */
  old?: unknown;
  /** Update handlers: the spec now (for a field handler: that field's value). */
  new?: unknown;
  /** Update handlers: what changed since the handlers last ran (only under `field` for a field handler). */
  diff: DiffItem[];
  /** The typed client of the operator's resource in this cluster. */
  client: ReconcileScope<T>["client"];
  /** A logger with the object's cluster, namespace and name. */
  logger: Logger;
  /** Aborted when the reconcile times out or the hub stops. */
  signal: AbortSignal;
  /** Posts a Normal event about the object (shown when the hub runs with `--event-level Normal`). */
  info(message: string, reason?: string): Promise<void>;
  /** Posts a Warning event about the object. */
  warn(message: string, reason?: string): Promise<void>;
}

/**
 * A handler: returns nothing, or status fields that are written in the same request as its done-mark.
 * Throw TemporaryError to retry after a delay, PermanentError to give up for good, anything else to retry
 * with backoff.
 */
export type HandlerFn<T extends StoredObject = StoredObject> = (
  context: HandlerContext<T>,
) => Promise<Record<string, unknown> | void> | Record<string, unknown> | void;

/** A handler with options: `id` (default: the function's name) and, for updates, a `field` it watches. */
export interface HandlerSpec<T extends StoredObject = StoredObject> {
  /** The handler. */
  fn: HandlerFn<T>;
  /** Unique per phase; persisted in `status.handlers`. Default: the function's name, else `<phase>-<index>`. */
  id?: string;
  /** Update handlers only: run only when this dotted path (e.g. `spec.replicas`) changed. */
  field?: string;
}

/** One handler, a handler with options, or several of either, for one phase. */
export type Handlers<T extends StoredObject> = HandlerFn<T> | HandlerSpec<T> | (HandlerFn<T> | HandlerSpec<T>)[];

/** A timer: `fn` every `intervalMs` per object; `id` defaults to the function's name. */
export interface TimerSpec<T extends StoredObject = StoredObject> {
  /** The handler run on every tick. */
  fn: HandlerFn<T>;
  /** The time between two runs for one object. */
  intervalMs: number;
  /** Unique among timers. Default: the function's name. */
  id?: string;
}

/** A Kopf-style operator: a resource and its handlers; see {@link defineHandlers}. */
export interface HandlersDefinition<T extends StoredObject = StoredObject> {
  /** Unique in a hub, as in defineOperator. */
  name: string;
  /** The resource it handles in every engaged cluster. */
  resource: ResourceType;
  /** Kopf's `@kopf.on.create`: once per object, ever (see the guarantees of defineHandlers). */
  create?: Handlers<T>;
  /** Kopf's `@kopf.on.update`: after the spec changed since the handlers last ran; `field` narrows it. */
  update?: Handlers<T>;
  /** Kopf's `@kopf.on.delete`: registers a finalizer; it is removed once every delete handler succeeded. */
  delete?: Handlers<T>;
  /** Kopf's `@kopf.on.resume`: once per object per hub process, for objects whose creation was handled before. */
  resume?: Handlers<T>;
  /**
   * Kopf's `@kopf.timer`: each runs every `intervalMs` per object while the object exists and is not being deleted
   * (in memory: a restart starts the intervals afresh). What it returns is written to status.
   */
  timers?: TimerSpec<T> | TimerSpec<T>[];
  /** Verbs the handlers use through `client` besides those the handlers need themselves. */
  verbs?: Verb[];
}

/** Retry the handler after `delayMs` (Kopf's `TemporaryError(delay=…)`); the handler runs again. */
export class TemporaryError extends Error {
  /** Always "TemporaryError". */
  override name = "TemporaryError";
  /** How long to wait before the handler runs again. */
  readonly delayMs: number;
  /** `delayMs` defaults to 60 s, as Kopf's delay. */
  constructor(message: string, delayMs = 60_000, options?: ErrorOptions) {
    super(message, options);
    this.delayMs = delayMs;
  }
}

/** The handler failed for good (Kopf's `PermanentError`): recorded on the object, never retried. */
export class PermanentError extends Error {
  /** Always "PermanentError". */
  override name = "PermanentError";
}

/** The finalizer a delete handler needs. */
export const FINALIZER = "operator-hub.dev/handlers";

/**
 * Defines an operator from Kopf-style handlers. It reconciles level-based underneath: every pass reads the
 * object, works out which handlers are still due from `status.handlers`, runs them and writes their status
 * and done-marks in ONE status write, guarded by the resourceVersion the handlers saw.
 *
 * Guarantees:
 * - a create (or delete) handler whose done-mark was written never runs again for that object: not after a
 *   restart, with two hubs, or after a 410 relist (the mark lives on the object, read back from the watch);
 * - the status a handler returns is written in the same request as its done-mark, so that effect lands
 *   exactly once; with two hubs the second write fails with 409 and is re-decided from the fresh object;
 * - a handler invocation itself is at-least-once, as in Kopf: one in flight when the hub dies (or racing
 *   another hub) may run again; side effects outside the returned status must be idempotent;
 * - update handlers run once per observed change of `spec` (a change during a handler run is seen next);
 * - a finalizer is added only when delete handlers exist, and removed once they all succeeded.
 *
 * Assumptions: the CRD's status schema keeps `status.handlers` (x-kubernetes-preserve-unknown-fields); this is
 * checked once per cluster after the first write (a TerminalError names the fix).
 */
export function defineHandlers<T extends StoredObject = StoredObject>(definition: HandlersDefinition<T>): Operator<T> {
  const d = definition;
  const create = resolve(d.create, "create");
  const update = resolve(d.update, "update");
  const del = resolve(d.delete, "delete");
  const resume = resolve(d.resume, "resume");
  // Objects (by uid) whose resume handlers ran in this process; not module-level: one per operator.
  const resumed = new Set<string>();
  // Clusters where a written done-mark was read back (the CRD keeps status.handlers).
  const verified = new Set<string>();
  const trackSpec = update.length > 0;
  const timers = resolveTimers(d.timers);
  // Per object (cluster/namespace/name): its uid and when each timer last fired (performance.now()).
  const timerRuns = new Map<string, { uid?: string; last: Map<string, number> }>();

  // Uids whose timers are scheduled in this process (a new object, or every object at start, starts them).
  const timerKeys = new Set<string>();
  const phaseOf = (obj: T): Phase | "finalize" | "add-finalizer" | "timers" | undefined => {
    const state = stateOf(obj.status);
    const finalizers = finalizersOf(obj);
    if (obj.metadata.deletionTimestamp) {
      return del.length && finalizers.includes(FINALIZER) ? "delete" : undefined;
    }
    if (del.length && !finalizers.includes(FINALIZER)) return "add-finalizer";
    if (create.some((h) => !finished(state, "create", h.id))) return "create";
    if (trackSpec && state.lastSpec !== JSON.stringify(obj.spec ?? {})) return "update";
    if (resume.length && obj.metadata.uid && !resumed.has(obj.metadata.uid)) return "resume";
    if (timers.length && !(timerKeys.has(obj.metadata.uid ?? ""))) return "timers";
    return undefined;
  };

  const verbs = new Set<Verb>(["get", "patchStatus", ...(d.verbs ?? [])]);
  if (del.length) verbs.add("patch");
  return defineOperator<T>({
    name: d.name,
    resource: d.resource,
    verbs: [...verbs],
    events: true,
    // Declared even without delete handlers: an older definition of the operator may have added it.
    finalizers: [FINALIZER],
    project: keepHandlerFields,
    needsReconcile: (obj) => phaseOf(obj) !== undefined,
    reconcile: async (request, scope) => {
      const result = await handle(request, scope);
      if (!timers.length) return result;
      const next = await runTimers(request, scope);
      if (next === undefined) return result;
      return { requeueAfterMs: result ? Math.min(result.requeueAfterMs, next) : next };
    },
  });

  function handle(request: Request, scope: ReconcileScope<T>): Promise<ReconcileResult> {
    return retryOnConflict(async (attempt): Promise<ReconcileResult> => {
      let obj = attempt
        ? await scope.client.get(request).catch((e) => isNotFound(e) ? undefined : Promise.reject(e))
        : scope.client.cached(request);
      if (!obj) return;
      let phase = phaseOf(obj);
      if (phase === "add-finalizer") {
        obj = await scope.client.patch(request, {
          metadata: { finalizers: [...finalizersOf(obj), FINALIZER], resourceVersion: obj.metadata.resourceVersion },
        });
        phase = phaseOf(obj);
      }
      if (!phase || phase === "add-finalizer" || phase === "finalize" || phase === "timers") return;
      const handlers = { create, update, delete: del, resume }[phase];
      return await runPhase(phase, handlers, obj, request, scope);
    });
  }

  /** Fires the timers that are due; resolves with the delay until the next one, undefined when they stopped. */
  async function runTimers(request: Request, scope: ReconcileScope<T>): Promise<number | undefined> {
    const key = `${request.cluster}/${request.namespace}/${request.name}`;
    const obj = scope.client.cached(request);
    if (!obj || obj.metadata.deletionTimestamp) {
      // Gone or going: its timers stop (no requeue).
      const uid = timerRuns.get(key)?.uid;
      if (uid) timerKeys.delete(uid);
      timerRuns.delete(key);
      return undefined;
    }
    let runs = timerRuns.get(key);
    if (!runs || runs.uid !== obj.metadata.uid) timerRuns.set(key, runs = { uid: obj.metadata.uid, last: new Map() });
    if (obj.metadata.uid) timerKeys.add(obj.metadata.uid);
    let next = Infinity;
    const statusOut: Record<string, unknown> = {};
    for (const t of timers) {
      const last = runs.last.get(t.id);
      const now = performance.now();
      if (last === undefined || now - last >= t.intervalMs) {
        runs.last.set(t.id, now);
        try {
          const result = await t.fn(contextFor(obj, request, scope, { diff: [] }));
          scope.logger.debug("handler finished", { phase: "timer", handler: t.id });
          if (result) Object.assign(statusOut, result);
        } catch (err) {
          scope.logger.warn("timer failed; it fires again at its next interval", { handler: t.id, error: String(err) });
        }
        next = Math.min(next, t.intervalMs);
      } else next = Math.min(next, t.intervalMs - (now - last));
    }
    if (Object.keys(statusOut).length) {
      await scope.client.patchStatus(obj, statusOut).catch((e) => {
        if (!isNotFound(e) && !isConflict(e)) throw e;
      });
    }
    return Math.max(1, Math.ceil(next));
  }

  async function runPhase(
    phase: Phase,
    handlers: Resolved<T>[],
    obj: T,
    request: Request,
    scope: ReconcileScope<T>,
  ): Promise<ReconcileResult> {
    const state = stateOf(obj.status);
    const spec = (obj.spec ?? {}) as Record<string, unknown>;
    let lastSpec: unknown = {};
    try {
      lastSpec = state.lastSpec ? JSON.parse(state.lastSpec) : {};
    } catch { /* a malformed mark: treat the whole spec as new */ }
    const fullDiff = phase === "update" ? diff(lastSpec, spec, "spec") : [];
    const statusOut: Record<string, unknown> = {};
    const outcomes: Record<string, HandlerOutcome> = {};
    let failure: unknown;
    for (const h of handlers) {
      if ((phase === "create" || phase === "delete") && finished(state, phase, h.id)) continue;
      const fieldDiff = h.field ? fullDiff.filter((i) => i.path === h.field || i.path.startsWith(`${h.field}.`)) : [];
      if (phase === "update" && h.field && fieldDiff.length === 0) continue;
      const context = contextFor(obj, request, scope, {
        diff: h.field ? fieldDiff : fullDiff,
        ...(phase === "update"
          ? h.field
            ? { old: valueAt({ spec: lastSpec }, h.field), new: valueAt(obj, h.field) }
            : { old: lastSpec, new: spec }
          : {}),
      });
      try {
        const result = await h.fn(context);
        // Counted by tests (invocations per object); before the write, so a kill right after still shows it.
        scope.logger.debug("handler finished", { phase, handler: h.id });
        if (result) Object.assign(statusOut, result);
        outcomes[h.id] = { done: true };
      } catch (err) {
        if (err instanceof PermanentError) {
          outcomes[h.id] = { failed: err.message };
          scope.logger.error("handler failed for good", { phase, handler: h.id, error: err.message });
          await context.warn(`${phase} handler ${h.id} failed for good: ${err.message}`, "HandlerFailed");
          continue;
        }
        failure = err;
        break;
      }
    }
    const progressed = Object.keys(outcomes).length > 0;
    // An object created while this hub runs is not resumed (Kopf's on.resume is for objects found at start).
    if ((phase === "resume" || phase === "create") && !failure && obj.metadata.uid) resumed.add(obj.metadata.uid);
    if (phase === "delete") {
      if (!failure) {
        // Every delete handler finished: drop the finalizer (guarded by the resourceVersion they saw).
        await scope.client.patch(request, {
          metadata: {
            finalizers: finalizersOf(obj).filter((f) => f !== FINALIZER),
            resourceVersion: obj.metadata.resourceVersion,
          },
        }).catch((e) => isNotFound(e) ? undefined : Promise.reject(e));
        return;
      }
      if (progressed) await write(obj, scope, request.cluster, { ...statusOut, [STATE_FIELD]: { delete: outcomes } });
    } else if (phase === "resume") {
      if (Object.keys(statusOut).length) await write(obj, scope, request.cluster, statusOut);
    } else {
      const doneWithPhase = !failure;
      const mark: HandlerState = phase === "create" ? { create: outcomes } : {};
      if (trackSpec && doneWithPhase) mark.lastSpec = JSON.stringify(spec);
      if (progressed || mark.lastSpec !== undefined) {
        await write(obj, scope, request.cluster, { ...statusOut, [STATE_FIELD]: mark });
      }
    }
    if (failure instanceof TemporaryError) {
      scope.logger.warn("handler asked for a retry", { phase, error: failure.message, delayMs: failure.delayMs });
      return { requeueAfterMs: failure.delayMs };
    }
    if (failure) throw failure;
  }

  async function write(
    obj: T,
    scope: ReconcileScope<T>,
    cluster: string,
    status: Record<string, unknown>,
  ): Promise<void> {
    await scope.client.patchStatus(obj, status);
    if (verified.has(cluster)) return;
    const back = await scope.client.get({ namespace: obj.metadata.namespace, name: obj.metadata.name })
      .catch((e) => isNotFound(e) ? undefined : Promise.reject(e));
    if (!back) return;
    if (Object.keys(stateOf(back.status)).length === 0) {
      throw new TerminalError(
        `operator ${d.name}: the CRD of ${d.resource.plural}.${d.resource.group} dropped status.${STATE_FIELD} ` +
          `(its status schema prunes unknown fields): add \`${STATE_FIELD}: {type: object, ` +
          "x-kubernetes-preserve-unknown-fields: true}` to its status properties",
      );
    }
    verified.add(cluster);
  }
}

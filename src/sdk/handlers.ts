// defineHandlers(): Kopf-style create/update/delete/resume/reconcile handlers on top of the level-based reconcile API.

import { isConflict, isNotFound } from "../kube/mod.ts";
import {
  type Operator,
  type ReconcileResult,
  type ReconcileScope,
  type Request,
  retryOnConflict,
  type StoredObject,
  TerminalError,
  unguarded,
  type Verb,
} from "../runtime/mod.ts";
import { defineOperator } from "./define_operator.ts";
import { contextFor as handlerContext, type HandlerContext } from "./handler_context.ts";
import { Daemons, resolveDaemons } from "./daemons.ts";
import { ObjectIndexes } from "./indexes.ts";
import {
  finalizersOf,
  handlerReads,
  keepHandlerFields,
  type Phase,
  resolve,
  type Resolved,
  resolveTimers,
} from "./_handler_support.ts";
import {
  diff,
  finished,
  type HandlerOutcome,
  type HandlerState,
  STATE_FIELD,
  stateOf,
  valueAt,
} from "./handler_state.ts";

import { type HandlersDefinition, PermanentError, TemporaryError } from "./handler_definition.ts";
import { returnedStatus } from "./_returned_status.ts";

export type { HandlerContext } from "./handler_context.ts";
export {
  type HandlerFn,
  type Handlers,
  type HandlersDefinition,
  type HandlerSpec,
  PermanentError,
  TemporaryError,
  type TimerSpec,
} from "./handler_definition.ts";

/**
 * The finalizer a delete handler needs.
 *
 * @example Is an object still waiting for its delete handlers?
 * ```ts
 * import { FINALIZER } from "../../sdk.ts";
 *
 * // An object as the apiserver returns it (a watch cache's projection drops finalizers).
 * declare const site: { metadata: { deletionTimestamp?: string; finalizers?: string[] } };
 * const waiting = site.metadata.deletionTimestamp !== undefined && !!site.metadata.finalizers?.includes(FINALIZER);
 * console.log(FINALIZER, waiting); // operator-hub.dev/handlers true
 * ```
 */
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
 *
 * @example
 * ```ts
 * import { defineHandlers, TemporaryError } from "../../mod.ts";
 *
 * export const hello = defineHandlers({
 *   name: "hello",
 *   resource: { group: "examples.operator-hub.dev", version: "v1", kind: "Greeting", plural: "greetings" },
 *   create: ({ name, spec }) => {
 *     if (typeof spec.who !== "string") throw new TemporaryError("spec.who is not set yet", 10_000);
 *     return { message: `Hello, ${spec.who} (from ${name})` };
 *   },
 *   delete: ({ name, info }) => info(`goodbye, ${name}`),
 * });
 * ```
 */
export function defineHandlers<T extends StoredObject = StoredObject>(definition: HandlersDefinition<T>): Operator<T> {
  const d = definition;
  const create = resolve(d.create, "create");
  const update = resolve(d.update, "update");
  const del = resolve(d.delete, "delete");
  const resume = resolve(d.resume, "resume");
  const level = resolve(d.reconcile, "reconcile");
  // Objects (by uid) whose resume handlers ran in this process; not module-level: one per operator.
  const resumed = new Set<string>();
  // Objects (by uid) whose level handlers succeeded in this process.
  const levelled = new Set<string>();
  // Clusters where a written done-mark was read back (the CRD keeps status.handlers).
  const verified = new Set<string>();
  const trackSpec = update.length > 0 || level.length > 0;
  const timers = resolveTimers(d.timers);
  // Per object (cluster/namespace/name): its uid and when each timer last fired (performance.now()).
  const timerRuns = new Map<string, { uid?: string; last: Map<string, number> }>();

  // Uids whose timers are scheduled in this process (a new object, or every object at start, starts them).
  const timerKeys = new Set<string>();
  // Indexes over the operator's objects in every engaged cluster, and daemons (src/sdk/indexes.ts, daemons.ts).
  const indexes = new ObjectIndexes<T>(d.indexes);
  const contextFor: typeof handlerContext<T> = (obj, request, scope, type, extra) =>
    handlerContext(obj, request, scope, type, { ...extra, indexes: indexes.view });
  const daemons = new Daemons<T>(
    resolveDaemons(d.daemons),
    (obj, request, scope) => contextFor(obj, request, scope, d.resource, { diff: [] }, d.owns),
  );
  const phaseOf = (obj: T): Phase | "add-finalizer" | "timers" | undefined => {
    const state = stateOf(obj.status);
    const finalizers = finalizersOf(obj);
    const uid = obj.metadata.uid;
    if (obj.metadata.deletionTimestamp) {
      return del.length && finalizers.includes(FINALIZER) ? "delete" : undefined;
    }
    if (del.length && !finalizers.includes(FINALIZER)) return "add-finalizer";
    if (create.some((h) => !finished(state, "create", h.id))) return "create";
    if (trackSpec && state.lastSpec !== JSON.stringify(obj.spec ?? {})) return "update";
    if (resume.length && uid && !resumed.has(uid)) return "resume";
    if (level.length && uid && !levelled.has(uid)) return "reconcile";
    if (timers.length && !(timerKeys.has(uid ?? ""))) return "timers";
    return undefined;
  };

  const verbs = new Set<Verb>(["get", "patchStatus", ...(d.verbs ?? [])]);
  if (del.length) verbs.add("patch");
  const operator = defineOperator<T>({
    name: d.name,
    resource: d.resource,
    verbs: [...verbs],
    events: true,
    uses: d.uses,
    owns: d.owns,
    watches: d.watches,
    validate: d.validate,
    mutate: d.mutate,
    // Declared even without delete handlers: an older definition of the operator may have added it.
    finalizers: [FINALIZER],
    ...(d.reads !== undefined ? { reads: handlerReads(d.reads) } : { project: keepHandlerFields }),
    needsReconcile: (obj) => phaseOf(obj) !== undefined || daemons.wanted(obj),
    reconcile: async (request, scope) => {
      // Daemons first: an object being deleted has them stopped before its delete handlers run.
      if (daemons.defined) await daemons.reconcile(request, scope);
      const result = await handle(request, scope);
      if (!timers.length) return result;
      const next = await runTimers(request, scope);
      if (next === undefined) return result;
      return { requeueAfterMs: result ? Math.min(result.requeueAfterMs, next) : next };
    },
  });
  return indexes.defined ? { ...operator, cacheObserver: indexes } : operator;

  /**
   * One pass. Only a 409 of the object's own writes (its finalizer, its status) re-reads it and decides again; a
   * handler's failure, a 409 from a call on another resource included, is thrown after the loop: a retry with backoff.
   */
  async function handle(request: Request, scope: ReconcileScope<T>): Promise<ReconcileResult> {
    let failure: unknown;
    const result = await retryOnConflict(async (attempt): Promise<ReconcileResult> => {
      failure = undefined;
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
      if (obj.metadata.deletionTimestamp && phase !== "delete") return;
      const due = phase === "create" || phase === "update" || phase === "delete" || phase === "resume" ? phase : null;
      if (!due && !level.length) return;
      const pass = await runPass(due, obj, request, scope);
      failure = pass.failure;
      return pass.result;
    });
    if (failure !== undefined) throw failure;
    return result;
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
      await scope.background?.stop(timerTask(request));
      return undefined;
    }
    let runs = timerRuns.get(key);
    if (!runs || runs.uid !== obj.metadata.uid) timerRuns.set(key, runs = { uid: obj.metadata.uid, last: new Map() });
    const uid = obj.metadata.uid;
    if (uid && !timerKeys.has(uid)) {
      timerKeys.add(uid);
      // Where this replica stops reconciling the cluster (a shard handoff, a pause, lost leadership), the object's
      // timers are forgotten, so they start again when it reconciles there again (daemons.ts's background tasks).
      scope.background?.start(
        timerTask(request),
        (task) =>
          new Promise<void>((resolve) =>
            task.signal.addEventListener("abort", () => {
              if (timerRuns.get(key)?.uid === uid) timerRuns.delete(key);
              timerKeys.delete(uid);
              resolve();
            }, { once: true })
          ),
      );
    }
    let next = Infinity;
    const statusOut: Record<string, unknown> = {};
    for (const t of timers) {
      const last = runs.last.get(t.id);
      const now = performance.now();
      if (last === undefined || now - last >= t.intervalMs) {
        runs.last.set(t.id, now);
        try {
          const result = returnedStatus(
            await t.fn(contextFor(obj, request, scope, d.resource, { diff: [] }, d.owns)),
            t.id,
          );
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

  /**
   * Runs the handlers of `phase` that are due (none for null), then the level handlers (not while deleting), and
   * writes their status and marks in one request. Resolves with the first failure instead of throwing it.
   */
  async function runPass(
    phase: Phase | null,
    obj: T,
    request: Request,
    scope: ReconcileScope<T>,
  ): Promise<{ result: ReconcileResult; failure?: unknown }> {
    const state = stateOf(obj.status);
    const spec = (obj.spec ?? {}) as Record<string, unknown>;
    let lastSpec: unknown = {};
    try {
      lastSpec = state.lastSpec ? JSON.parse(state.lastSpec) : {};
    } catch { /* a malformed mark: treat the whole spec as new */ }
    // No spec seen yet (no create handler recorded one): the object's creation, which is no update (as in Kopf).
    const creation = phase === "update" && state.lastSpec === undefined;
    const fullDiff = phase === "update" ? diff(lastSpec, spec, "spec") : [];
    const statusOut: Record<string, unknown> = {};
    const outcomes: Record<string, HandlerOutcome> = {};
    let failure: unknown;
    const handlers = phase && !creation ? { create, update, delete: del, resume, reconcile: [] }[phase] : [];
    for (const h of handlers) {
      if ((phase === "create" || phase === "delete") && finished(state, phase, h.id)) continue;
      const fieldDiff = h.field ? fullDiff.filter((i) => i.path === h.field || i.path.startsWith(`${h.field}.`)) : [];
      if (phase === "update" && h.field && fieldDiff.length === 0) continue;
      const context = contextFor(obj, request, scope, d.resource, {
        diff: h.field ? fieldDiff : fullDiff,
        ...(phase === "update"
          ? h.field
            ? { old: valueAt({ spec: lastSpec }, h.field), new: valueAt(obj, h.field) }
            : { old: lastSpec, new: spec }
          : {}),
      }, d.owns);
      const ran = await runOne(h, context, phase!, scope);
      if (ran.failure !== undefined) {
        failure = ran.failure;
        break;
      }
      Object.assign(statusOut, ran.status);
      outcomes[h.id] = ran.outcome;
    }
    const phaseDone = failure === undefined;
    const progressed = Object.keys(outcomes).length > 0;
    // An object created while this hub runs is not resumed (Kopf's on.resume is for objects found at start).
    if ((phase === "resume" || phase === "create") && phaseDone && obj.metadata.uid) resumed.add(obj.metadata.uid);
    if (phaseDone && phase !== "delete" && level.length) {
      for (const h of level) {
        const ran = await runOne(
          h,
          contextFor(obj, request, scope, d.resource, { diff: [] }, d.owns),
          "reconcile",
          scope,
        );
        if (ran.failure !== undefined) {
          failure = ran.failure;
          break;
        }
        Object.assign(statusOut, ran.status);
      }
      if (failure === undefined && obj.metadata.uid) levelled.add(obj.metadata.uid);
    }
    if (phase === "delete") {
      if (phaseDone) {
        // Every delete handler finished: drop the finalizer (guarded by the resourceVersion they saw).
        await scope.client.patch(request, {
          metadata: {
            finalizers: finalizersOf(obj).filter((f) => f !== FINALIZER),
            resourceVersion: obj.metadata.resourceVersion,
          },
        }).catch((e) => isNotFound(e) ? undefined : Promise.reject(e));
        return { result: undefined };
      }
      if (progressed) await write(obj, scope, request.cluster, { ...statusOut, [STATE_FIELD]: { delete: outcomes } });
    } else if (phase === "create" || phase === "update") {
      const mark: HandlerState = phase === "create" ? { create: outcomes } : {};
      if (trackSpec && phaseDone) mark.lastSpec = JSON.stringify(spec);
      if (progressed || mark.lastSpec !== undefined) {
        await write(obj, scope, request.cluster, { ...statusOut, [STATE_FIELD]: mark });
      }
    } else {
      // Resume and level handlers leave no mark: their status is written only when it changes something.
      const status = (unguarded(obj).status ?? {}) as Record<string, unknown>;
      const changed = Object.keys(statusOut).some((k) => JSON.stringify(status[k]) !== JSON.stringify(statusOut[k]));
      if (changed) await write(obj, scope, request.cluster, statusOut);
    }
    if (failure instanceof TemporaryError) {
      scope.logger.warn("handler asked for a retry", { phase, error: failure.message, delayMs: failure.delayMs });
      return { result: { requeueAfterMs: failure.delayMs } };
    }
    return { result: undefined, failure };
  }

  /** Runs one handler: its status and outcome, or the failure to stop the pass with (a PermanentError is an outcome). */
  async function runOne(
    h: Resolved<T>,
    context: HandlerContext<T>,
    phase: Phase,
    scope: ReconcileScope<T>,
  ): Promise<{ status?: Record<string, unknown>; outcome: HandlerOutcome; failure?: unknown }> {
    try {
      const result = await h.fn(context);
      // Counted by tests (invocations per object); before the write, so a kill right after still shows it.
      scope.logger.debug("handler finished", { phase, handler: h.id });
      return { status: returnedStatus(result, h.id), outcome: { done: true } };
    } catch (err) {
      if (!(err instanceof PermanentError)) return { outcome: {}, failure: err };
      scope.logger.error("handler failed for good", { phase, handler: h.id, error: err.message });
      await context.warn(`${phase} handler ${h.id} failed for good: ${err.message}`, "HandlerFailed");
      return { outcome: { failed: err.message } };
    }
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

/** The background task that forgets an object's timers when reconciling its cluster stops here. */
function timerTask(request: Request): string {
  return `timers@${request.namespace}/${request.name}`;
}

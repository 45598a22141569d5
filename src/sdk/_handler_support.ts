// The parts of defineHandlers() that need no state: resolving handler lists and timers, the projection.

import type { StoredObject } from "../runtime/mod.ts";
import { trimObject } from "../runtime/mod.ts";
import { OperatorDefinitionError } from "./operator_definition_error.ts";
import { STATE_FIELD } from "./handler_state.ts";
import type { HandlerFn, Handlers, TimerSpec } from "./handler_definition.ts";

/** A handler with its id settled. */
export interface Resolved<T extends StoredObject> {
  id: string;
  fn: HandlerFn<T>;
  field?: string;
}

/** The handler kinds that run in a pass (create and delete persist their runs; update tracks the spec). */
export type Phase = "create" | "update" | "delete" | "resume" | "reconcile";

/** Settles a phase's handlers with their ids; refuses non-functions, a misplaced `field` and duplicate ids. */
export function resolve<T extends StoredObject>(handlers: Handlers<T> | undefined, phase: Phase): Resolved<T>[] {
  const list = handlers === undefined ? [] : Array.isArray(handlers) ? handlers : [handlers];
  const out = list.map((h, i) => {
    const spec = typeof h === "function" ? { fn: h } : h;
    if (typeof spec?.fn !== "function") {
      throw new OperatorDefinitionError(`${phase} handler #${i} is not a function (nor { fn })`);
    }
    if (spec.field !== undefined && phase !== "update") {
      throw new OperatorDefinitionError(`${phase} handler #${i}: \`field\` applies to update handlers only`);
    }
    return { id: spec.id ?? (spec.fn.name || `${phase}-${i}`), fn: spec.fn, field: spec.field };
  });
  const ids = out.map((h) => h.id);
  const dup = ids.find((id, i) => ids.indexOf(id) !== i);
  if (dup !== undefined) {
    throw new OperatorDefinitionError(`two ${phase} handlers share the id "${dup}": give one an \`id\``);
  }
  return out;
}

/** Settles the timers with their ids; refuses a non-positive interval and duplicate ids. */
export function resolveTimers<T extends StoredObject>(
  timers: TimerSpec<T> | TimerSpec<T>[] | undefined,
): Required<TimerSpec<T>>[] {
  const list = timers === undefined ? [] : Array.isArray(timers) ? timers : [timers];
  const out = list.map((t, i) => {
    if (typeof t?.fn !== "function") throw new OperatorDefinitionError(`timer #${i}: fn must be a function`);
    if (!(typeof t.intervalMs === "number" && t.intervalMs > 0 && Number.isFinite(t.intervalMs))) {
      throw new OperatorDefinitionError(`timer #${i}: intervalMs must be a positive number, got ${t.intervalMs}`);
    }
    return { id: t.id ?? (t.fn.name || `timer-${i}`), fn: t.fn, intervalMs: t.intervalMs };
  });
  const ids = out.map((t) => t.id);
  const dup = ids.find((id, i) => ids.indexOf(id) !== i);
  if (dup !== undefined) throw new OperatorDefinitionError(`two timers share the id "${dup}": give one an \`id\``);
  return out;
}

/** A copy of the object's finalizers (kept by keepHandlerFields). */
export function finalizersOf(obj: StoredObject): string[] {
  return ((obj.metadata as { finalizers?: string[] }).finalizers ?? []).slice();
}

/**
 * What the handlers' machinery reads (its diffs, its state, its finalizer) beside an operator's own `reads`, once each.
 */
export function handlerReads(reads: readonly string[]): string[] {
  const own = ["spec", `status.${STATE_FIELD}`, "metadata.labels", "metadata.annotations", "metadata.finalizers"];
  return [...new Set([...own, ...reads])];
}

/** The default projection plus what handlers read: labels, annotations and finalizers. */
export function keepHandlerFields(raw: Record<string, unknown>): StoredObject {
  const out = trimObject(raw);
  const m = (raw.metadata ?? {}) as Record<string, unknown>;
  for (const field of ["labels", "annotations", "finalizers"]) {
    if (m[field] !== undefined) (out.metadata as unknown as Record<string, unknown>)[field] = m[field];
  }
  return out;
}

// Handler progress as it is persisted on the object (`status.handlers`), and the field diff update handlers see.

/**
 * One handler's persisted outcome: done, or failed for good (a PermanentError), never run again.
 *
 * @example
 * ```ts
 * import type { HandlerOutcome } from "../../sdk.ts";
 *
 * const describe = (id: string, o: HandlerOutcome): string =>
 *   o.failed !== undefined ? `${id} failed: ${o.failed}` : o.done ? `${id} done` : `${id} pending`;
 * console.log(describe("greet", { failed: "spec.who is not a string" })); // greet failed: spec.who is not a string
 * ```
 */
export interface HandlerOutcome {
  /** True once the handler succeeded. */
  done?: boolean;
  /** The PermanentError's message, when it failed for good. */
  failed?: string;
}

/**
 * What `status.handlers` holds: the outcome of each create and delete handler by id, and the spec the
 * update and reconcile handlers last saw (a JSON string, as Kopf's `last-handled-configuration` annotation).
 *
 * @example The create handlers that failed for good on an object
 * ```ts
 * import type { HandlerState, StoredObject } from "../../sdk.ts";
 *
 * declare const obj: StoredObject;
 * const state = ((obj.status ?? {}) as { handlers?: HandlerState }).handlers ?? {};
 * const failed = Object.entries(state.create ?? {}).filter(([, o]) => o.failed !== undefined);
 * console.log(failed.map(([id, o]) => `${id}: ${o.failed}`));
 * ```
 */
export interface HandlerState {
  /** The create handlers' outcomes, by id. */
  create?: Record<string, HandlerOutcome>;
  /** The delete handlers' outcomes, by id. */
  delete?: Record<string, HandlerOutcome>;
  /**
   * `JSON.stringify(spec)` when the create or update handlers last finished; kept only when update or reconcile
   * handlers exist (a spec change queues the reconcile handlers too).
   */
  lastSpec?: string;
}

/** Where the state lives in `status`. The CRD's status schema must keep it (x-kubernetes-preserve-unknown-fields). */
export const STATE_FIELD = "handlers";

/** Reads the persisted state of an object's status (an empty state when absent or malformed). */
export function stateOf(status: unknown): HandlerState {
  const s = (status as Record<string, unknown> | undefined)?.[STATE_FIELD];
  return s && typeof s === "object" && !Array.isArray(s) ? s as HandlerState : {};
}

/** True when the handler has an outcome (done or failed) in `phase`. */
export function finished(state: HandlerState, phase: "create" | "delete", id: string): boolean {
  const o = state[phase]?.[id];
  return o?.done === true || typeof o?.failed === "string";
}

/**
 * One difference between the old and the new object, Kopf's diff item: `add`, `change` or `remove` at a path.
 *
 * @example An update handler that logs what changed
 * ```ts
 * import { defineHandlers, type DiffItem } from "../../sdk.ts";
 *
 * const line = (d: DiffItem): string => `${d.op} ${d.path}: ${JSON.stringify(d.old)} -> ${JSON.stringify(d.new)}`;
 * const site = defineHandlers({
 *   name: "site",
 *   resource: { group: "examples.operator-hub.dev", version: "v1", kind: "Website", plural: "websites" },
 *   update: ({ diff, logger }) => diff.forEach((d) => logger.info(line(d))),
 * });
 * ```
 */
export interface DiffItem {
  /** What happened at `path`. */
  op: "add" | "change" | "remove";
  /** Dotted path, e.g. `spec.replicas`. */
  path: string;
  /** The value before (undefined for `add`). */
  old: unknown;
  /** The value after (undefined for `remove`). */
  new: unknown;
}

/** The differences between two JSON values, deepest first; arrays compare as wholes, as Kopf does. */
export function diff(old: unknown, now: unknown, path = ""): DiffItem[] {
  if (JSON.stringify(old) === JSON.stringify(now)) return [];
  const isObj = (v: unknown) => v !== null && typeof v === "object" && !Array.isArray(v);
  if (isObj(old) && isObj(now)) {
    const a = old as Record<string, unknown>;
    const b = now as Record<string, unknown>;
    const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
    return keys.flatMap((k) => diff(a[k], b[k], path ? `${path}.${k}` : k));
  }
  const op = old === undefined ? "add" : now === undefined ? "remove" : "change";
  return [{ op, path, old, new: now }];
}

/** The value at a dotted path (`spec.replicas`), undefined when any step is missing. */
export function valueAt(object: unknown, path: string): unknown {
  let v: unknown = object;
  for (const step of path.split(".")) {
    if (v === null || typeof v !== "object") return undefined;
    v = (v as Record<string, unknown>)[step];
  }
  return v;
}

// What defineHandlers() takes: the handler kinds, their options, and the errors a handler throws to steer retries.

import type { ResourceType } from "../kube/mod.ts";
import type { ResourceUse, StoredObject, Verb, WatchedResource } from "../runtime/mod.ts";
import type { OwnedResource } from "./adopt.ts";
import type { HandlerContext } from "./handler_context.ts";
import type { DaemonSpec } from "./daemons.ts";
import type { IndexFn } from "./indexes.ts";
import type { MutateHandlers, ValidateHandlers } from "./admission.ts";

/**
 * A handler: returns nothing, or status fields that are written in the same request as its done-mark (typed by a
 * defined resource's status schema). Throw TemporaryError to retry after a delay, PermanentError to give up for good,
 * anything else to retry with backoff.
 *
 * @example
 * ```ts
 * import type { HandlerFn } from "../../sdk.ts";
 *
 * const greet: HandlerFn = async ({ name, spec, info }) => {
 *   await info(`greeted ${name}`);
 *   return { message: `Hello, ${spec.who ?? name}` }; // written to status with the done-mark
 * };
 * ```
 */
export type HandlerFn<T extends StoredObject = StoredObject> = (
  context: HandlerContext<T>,
) => Promise<Partial<HandlerContext<T>["status"]> | void> | Partial<HandlerContext<T>["status"]> | void;

/**
 * A handler with options: `id` (default: the function's name) and, for updates, a `field` it watches.
 *
 * @example An update handler for one field
 * ```ts
 * import { defineHandlers, type HandlerSpec } from "../../sdk.ts";
 *
 * const rescale: HandlerSpec = {
 *   id: "rescale",
 *   field: "spec.replicas",
 *   fn: ({ old, new: now, info }) => info(`replicas ${old} -> ${now}`, "Rescaled"),
 * };
 * const site = defineHandlers({
 *   name: "site",
 *   resource: { group: "examples.operator-hub.dev", version: "v1", kind: "Website", plural: "websites" },
 *   update: rescale,
 * });
 * ```
 */
export interface HandlerSpec<T extends StoredObject = StoredObject> {
  /** The handler. */
  fn: HandlerFn<T>;
  /** Unique per phase; persisted in `status.handlers`. Default: the function's name, else `<phase>-<index>`. */
  id?: string;
  /** Update handlers only: run only when this dotted path (e.g. `spec.replicas`) changed. */
  field?: string;
}

/**
 * One handler, a handler with options, or several of either, for one phase.
 *
 * @example Two create handlers, each with its own done-mark
 * ```ts
 * import type { Handlers, StoredObject } from "../../sdk.ts";
 *
 * const create: Handlers<StoredObject> = [
 *   function announce({ name, info }) {
 *     return info(`${name} created`);
 *   },
 *   { id: "first-status", fn: () => ({ phase: "Pending" }) },
 * ];
 * ```
 */
export type Handlers<T extends StoredObject> = HandlerFn<T> | HandlerSpec<T> | (HandlerFn<T> | HandlerSpec<T>)[];

/**
 * A timer: `fn` every `intervalMs` per object; `id` defaults to the function's name.
 *
 * @example
 * ```ts
 * import { defineHandlers, type TimerSpec } from "../../sdk.ts";
 *
 * const heartbeat: TimerSpec = {
 *   id: "heartbeat",
 *   intervalMs: 60_000,
 *   fn: () => ({ checkedAt: new Date().toISOString() }),
 * };
 * const site = defineHandlers({
 *   name: "site",
 *   resource: { group: "examples.operator-hub.dev", version: "v1", kind: "Website", plural: "websites" },
 *   verbs: ["patchStatus"],
 *   timers: heartbeat,
 * });
 * ```
 */
export interface TimerSpec<T extends StoredObject = StoredObject> {
  /** The handler run on every tick. */
  fn: HandlerFn<T>;
  /** The time between two runs for one object. */
  intervalMs: number;
  /** Unique among timers. Default: the function's name. */
  id?: string;
}

/**
 * A Kopf-style operator: a resource and its handlers; see {@link defineHandlers}.
 *
 * @example A definition built as a value, then defined
 * ```ts
 * import { defineHandlers, type HandlersDefinition } from "../../sdk.ts";
 *
 * const definition: HandlersDefinition = {
 *   name: "hello",
 *   resource: { group: "examples.operator-hub.dev", version: "v1", kind: "Greeting", plural: "greetings" },
 *   create: ({ name }) => ({ message: `Hello, ${name}` }),
 *   delete: ({ name, info }) => info(`goodbye, ${name}`),
 * };
 * const hello = defineHandlers(definition);
 * ```
 */
export interface HandlersDefinition<T extends StoredObject = StoredObject> {
  /** Unique in a hub, as in defineOperator. */
  name: string;
  /**
   * The resource it handles in every engaged cluster. A resource made by `defineResource` (or a typed kind) types
   * every handler's `body`, `spec` and `status`, its indexes and its admission handlers.
   */
  resource: ResourceType<T> | ResourceType;
  /**
   * The fields of its objects its handlers read beyond what the handlers' own machinery keeps (the whole `spec`,
   * `status.handlers`, labels, annotations and finalizers): the cache keeps those and nothing else, and under the
   * read check (see `OperatorDefinition.reads`) a handler that reads any other field, e.g. a status field not
   * listed, fails with an UndeclaredFieldError. Status fields that `resume` and `reconcile` handlers return are
   * compared with the object's before they are written: list them, or they are written on every pass.
   */
  reads?: readonly string[];
  /** Kopf's `@kopf.on.create`: once per object, ever (see the guarantees of defineHandlers). */
  create?: Handlers<T>;
  /**
   * Kopf's `@kopf.on.update`: after the spec changed since the handlers last ran; `field` narrows it. Never at the
   * object's creation (as in Kopf): without create handlers, the first pass only records the spec they start from.
   */
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
  /**
   * Kopf's `@kopf.daemon`: each runs once per object, for as long as the object exists and this replica reconciles its
   * cluster; its `signal` aborts on the object's deletion, the cluster's disengagement, a shard handoff and the hub's
   * stop, then it has its grace period (default 5 s) to return. See {@link DaemonSpec}.
   */
  daemons?: DaemonSpec<T> | DaemonSpec<T>[];
  /**
   * Kopf's `@kopf.index`: in-memory indexes over the operator's objects in every engaged cluster, by name; handlers,
   * timers and daemons read them as `ctx.indexes.NAME.get(key)`. See {@link IndexFn} and {@link Index}.
   */
  indexes?: Record<string, IndexFn<T>>;
  /**
   * Level-based handlers (controller-runtime's Reconcile, on the handler context): run in every pass once the pass's
   * create, update or resume handlers succeeded, and in a pass with none due: once per object per hub process, after
   * each change of `spec`, and whenever an owned or watched object queued it (a child deleted by hand). No done-mark:
   * they must be idempotent (create what is missing). What they return joins the pass's status write, or is written
   * alone when it differs from the status. Not run while the object is being deleted.
   *
   * @example Recreate a child deleted by hand
   * ```ts
   * import { defineHandlers, ignoreNotFound, kinds } from "../../mod.ts";
   * export const op = defineHandlers({
   *   name: "site",
   *   resource: { group: "examples.operator-hub.dev", version: "v1", kind: "Website", plural: "websites" },
   *   owns: [{ type: kinds.ConfigMap, verbs: ["get", "create"] }],
   *   async reconcile({ clientFor, adopt, name }) {
   *     const cm = adopt({ metadata: { name }, data: {} }, { type: kinds.ConfigMap });
   *     const configMaps = clientFor(kinds.ConfigMap);
   *     if (!(await configMaps.get(cm.metadata).catch(ignoreNotFound))) await configMaps.create(cm);
   *   },
   * });
   * ```
   */
  reconcile?: Handlers<T>;
  /**
   * Kopf's `@kopf.on.validate`: admission handlers that refuse (throw `AdmissionError`), warn (`ctx.warn`) or allow an
   * object before it is stored, served by a hub run with `--webhook-bind-address` (see OperatorDefinition.validate).
   *
   * @example
   * ```ts
   * import { AdmissionError, defineHandlers } from "../../mod.ts";
   * export const op = defineHandlers({
   *   name: "site",
   *   resource: { group: "examples.operator-hub.dev", version: "v1", kind: "Website", plural: "websites" },
   *   validate: { operations: ["CREATE", "UPDATE"], fn: ({ spec }) => {
   *     if (!spec.image) throw new AdmissionError("spec.image is required", 422);
   *   } },
   * });
   * ```
   */
  validate?: ValidateHandlers<T>;
  /**
   * Kopf's `@kopf.on.mutate`: admission handlers that change the object before it is stored (defaults); the hub
   * answers the change as a JSON Patch (see OperatorDefinition.mutate).
   *
   * @example
   * ```ts
   * import { defineHandlers } from "../../mod.ts";
   * export const op = defineHandlers({
   *   name: "site",
   *   resource: { group: "examples.operator-hub.dev", version: "v1", kind: "Website", plural: "websites" },
   *   mutate: function defaults({ spec, name }) {
   *     spec.content ??= `Welcome to ${name}`;
   *   },
   * });
   * ```
   */
  mutate?: MutateHandlers<T>;
  /** Verbs the handlers use through `client` besides those the handlers need themselves. */
  verbs?: Verb[];
  /** Other resources the handlers reach through `clientFor`, in this cluster or any engaged one, with their verbs. */
  uses?: ResourceUse[];
  /** Child resources whose changes requeue their parent (see OperatorDefinition.owns and `adopt`). */
  owns?: readonly (ResourceType | OwnedResource)[];
  /** Other resources whose changes queue objects of this one, mapped back to them (see WatchedResource). */
  watches?: readonly WatchedResource[];
}

/**
 * Retry the handler after `delayMs` (Kopf's `TemporaryError(delay=…)`); the handler runs again.
 *
 * @example Wait for a Secret that another tool creates
 * ```ts
 * import { defineHandlers, ignoreNotFound, kinds, TemporaryError } from "../../mod.ts";
 *
 * export const site = defineHandlers({
 *   name: "site",
 *   resource: { group: "examples.operator-hub.dev", version: "v1", kind: "Website", plural: "websites" },
 *   uses: [{ type: kinds.Secret, verbs: ["get"] }],
 *   create: async ({ clientFor, namespace, name }) => {
 *     const tls = await clientFor(kinds.Secret).get({ namespace, name: `${name}-tls` }).catch(ignoreNotFound);
 *     if (!tls) throw new TemporaryError(`Secret ${name}-tls does not exist yet`, 15_000);
 *   },
 * });
 * ```
 */
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

/**
 * The handler failed for good (Kopf's `PermanentError`): recorded on the object, never retried.
 *
 * @example
 * ```ts
 * import { defineHandlers, PermanentError } from "../../mod.ts";
 *
 * export const site = defineHandlers({
 *   name: "site",
 *   resource: { group: "examples.operator-hub.dev", version: "v1", kind: "Website", plural: "websites" },
 *   create: ({ spec }) => {
 *     if (typeof spec.image !== "string") throw new PermanentError("spec.image is not a string: fix the object");
 *     return { image: spec.image };
 *   },
 * });
 * ```
 */
export class PermanentError extends Error {
  /** Always "PermanentError". */
  override name = "PermanentError";
}

// What a Kopf-style handler gets: the object and its parts, the diff, clients for any declared kind, adopt, events.

import type { ResourceType } from "../kube/mod.ts";
import {
  fieldOrEmpty,
  type NewObject,
  type ReconcileScope,
  type Request,
  type ResourceClient,
  type StoredObject,
} from "../runtime/mod.ts";
import type { Logger } from "../util/mod.ts";
import { adopt, type Adopted, type AdoptOptions, type OwnedResource } from "./adopt.ts";
import type { DiffItem } from "./handler_state.ts";
import type { Indexes } from "./indexes.ts";

/**
 * What a handler gets, in Kopf's spirit: the object, its parts, the diff (updates), clients and helpers.
 *
 * @example A handler written as a function of its own
 * ```ts
 * import { defineHandlers, type HandlerContext } from "../../mod.ts";
 *
 * async function greet({ spec, name, cluster, info }: HandlerContext): Promise<{ message: string }> {
 *   await info(`greeting ${name} in ${cluster}`, "Greeting");
 *   return { message: `Hello, ${spec.who ?? name}` };
 * }
 * const hello = defineHandlers({
 *   name: "hello",
 *   resource: { group: "examples.operator-hub.dev", version: "v1", kind: "Greeting", plural: "greetings" },
 *   create: greet,
 * });
 * ```
 */
export interface HandlerContext<T extends StoredObject = StoredObject> {
  /** The object as the handler found it (identity, labels, annotations, finalizers, spec, status). */
  body: T;
  /**
   * The object's `spec` (`{}` when it has none): typed by a defined resource (see `defineResource`) or a typed kind,
   * `Record<string, unknown>` for a plain `{ group, version, kind, plural }`.
   */
  spec: unknown extends T["spec"] ? Record<string, unknown> : NonNullable<T["spec"]>;
  /** The object's `status` (`{}` when it has none): typed (partial) by a defined resource, else untyped as `spec`. */
  status: unknown extends T["status"] ? Record<string, unknown> : NonNullable<T["status"]>;
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
  /**
   * A typed client for `type` in this cluster, or in the engaged cluster named `cluster`. `type` must be declared in
   * the operator's `uses` or `owns` (its verbs are what the client may do, and what the pre-flight checks). Its
   * objects have the type `type` carries: `clientFor(kinds.ConfigMap).get(ref)` resolves with a ConfigMap (its `data`
   * a `Record<string, string> | undefined`), `clientFor(Website)` with a Website; else `U` (default untyped).
   *
   * Guarantees: a call's failure is that call's error (a 409 or 404 from a child is never taken for a conflict on the
   * handler's own object): handle it, or let it escape and the handler is retried with backoff. A cluster that is
   * not engaged throws an Error naming it (retried with backoff, as it may be engaged later).
   *
   * @example
   * ```ts
   * import { defineHandlers, ignoreNotFound, kinds } from "../../mod.ts";
   * export const op = defineHandlers({
   *   name: "cleaner",
   *   resource: { group: "examples.operator-hub.dev", version: "v1", kind: "Website", plural: "websites" },
   *   uses: [{ type: kinds.ConfigMap, verbs: ["delete"] }],
   *   delete: ({ clientFor, namespace, name }) => clientFor(kinds.ConfigMap).delete({ namespace, name }).catch(ignoreNotFound),
   * });
   * ```
   */
  clientFor<U extends StoredObject = StoredObject>(
    type: ResourceType<U> | ResourceType,
    cluster?: string,
  ): ResourceClient<U>;
  /** The names of every engaged cluster (this one included). */
  clusters(): string[];
  /**
   * Marks `child` as this object's (see the root `adopt` for what is set, and when no owner reference can be):
   * pass `{ type }` for a kind that is not in `kinds`, and `{ cluster }` for a child in another cluster (labelled and
   * annotated only: an owner reference cannot cross clusters, so nothing collects it; delete it in a delete handler).
   *
   * @example
   * ```ts
   * import { defineHandlers, kinds } from "../../mod.ts";
   * export const op = defineHandlers({
   *   name: "site",
   *   resource: { group: "examples.operator-hub.dev", version: "v1", kind: "Website", plural: "websites" },
   *   owns: [{ type: kinds.ConfigMap, verbs: ["create"] }],
   *   create: ({ clientFor, adopt, name }) =>
   *     clientFor(kinds.ConfigMap).create(adopt({ metadata: { name }, data: {} }, { type: kinds.ConfigMap })),
   * });
   * ```
   */
  adopt<O extends NewObject>(child: O, options?: AdoptOptions): Adopted<O>;
  /** The operator's indexes by name (`indexes.NAME.get(key)`), over its objects in every engaged cluster. */
  indexes: Indexes;
  /** A logger with the object's cluster, namespace and name. */
  logger: Logger;
  /** Aborted when the reconcile times out or the hub stops. */
  signal: AbortSignal;
  /** Posts a Normal event about the object (shown when the hub runs with `--event-level Normal`). */
  info(message: string, reason?: string): Promise<void>;
  /** Posts a Warning event about the object. */
  warn(message: string, reason?: string): Promise<void>;
}

/** The context of one handler run on `obj`, of the operator's resource `type`. */
export function contextFor<T extends StoredObject>(
  obj: T,
  request: Request,
  scope: ReconcileScope<T>,
  type: ResourceType,
  extra: { diff: DiffItem[]; old?: unknown; new?: unknown; indexes?: Indexes },
  owns?: readonly (ResourceType | OwnedResource)[],
): HandlerContext<T> {
  const event = (kind: "Normal" | "Warning", reason: string, message: string) =>
    scope.events.record(obj, kind, reason, message);
  return {
    body: obj,
    spec: fieldOrEmpty(obj, "spec") as HandlerContext<T>["spec"],
    status: fieldOrEmpty(obj, "status") as HandlerContext<T>["status"],
    cluster: request.cluster,
    namespace: request.namespace,
    name: request.name,
    uid: obj.metadata.uid,
    client: scope.client,
    clientFor: <U extends StoredObject>(other: ResourceType<U> | ResourceType, cluster = request.cluster) => {
      const connection = scope.cluster(cluster);
      if (!connection) throw new Error(`cannot reach ${other.kind} in cluster ${cluster}: it is not engaged`);
      return connection.client<U>(other);
    },
    clusters: () => scope.clusters?.() ?? [request.cluster],
    adopt: (child, options) => adopt(child, { object: obj, type, cluster: request.cluster, owns }, options),
    indexes: NO_INDEXES,
    logger: scope.logger,
    signal: scope.signal,
    info: (message, reason = "Handled") => event("Normal", reason, message),
    warn: (message, reason = "HandlerWarning") => event("Warning", reason, message),
    ...extra,
  };
}

const NO_INDEXES: Indexes = Object.freeze({});

// defineOperator(): an operator in one call, from a resource, the verbs it uses and a level-based reconcile.

import type { ResourceType } from "../kube/mod.ts";
import { type OwnedResource, ownedWatch } from "./adopt.ts";
import { admissionWebhooks, type MutateHandlers, type ValidateHandlers } from "./admission.ts";
import {
  fieldProjection,
  type Operator,
  type Projection,
  readsProblem,
  type ReconcileResult,
  type ReconcileScope,
  type Request,
  type ResourceUse,
  type StoredObject,
  type Verb,
  type WatchedResource,
} from "../runtime/mod.ts";
import { OperatorDefinitionError } from "./operator_definition_error.ts";

export { OperatorDefinitionError };

/**
 * Everything an operator declares; see {@link defineOperator}.
 *
 * @example A definition built as a value, then defined
 * ```ts
 * import { defineOperator, type OperatorDefinition } from "../../sdk.ts";
 *
 * const definition: OperatorDefinition = {
 *   name: "greeting",
 *   resource: { group: "examples.operator-hub.dev", version: "v1", kind: "Greeting", plural: "greetings" },
 *   verbs: ["patchStatus"],
 *   async reconcile(request, { client }) {
 *     const obj = client.cached(request);
 *     if (obj && !obj.status) await client.patchStatus(obj, { message: `Hello, ${request.name}` });
 *   },
 * };
 * const greeting = defineOperator(definition);
 * ```
 */
export interface OperatorDefinition<T extends StoredObject = StoredObject> {
  /** Unique in a hub: lowercase letters, digits, "-" and "."; the `controller` label in metrics. */
  name: string;
  /**
   * The resource it watches and reconciles in every engaged cluster (or in those `resourceClusters` accepts). A
   * resource made by `defineResource` (or a typed kind) types `scope.client`'s objects and the admission handlers.
   */
  resource: ResourceType<T> | ResourceType;
  /**
   * The clusters its `resource` lives in; default every engaged cluster. In any other engaged cluster the
   * resource is neither discovered, pre-flighted nor watched (a cluster without its CRD is not `missing-crd`
   * for this operator's sake): only its `uses` and `watches` are checked there, its `watches` run there, and its
   * reconciles reach it through `scope.cluster(name)`. The way to write an operator whose objects live in one
   * cluster (e.g. the hub's home cluster) and act on others.
   *
   * @example A resource that lives only in the home cluster, acting on ConfigMaps in every other one
   * ```ts
   * import { defineOperator } from "./define_operator.ts";
   * const home = "prod";
   * export const fanOut = defineOperator({
   *   name: "fan-out",
   *   resource: { group: "examples.operator-hub.dev", version: "v1", kind: "FanOut", plural: "fanouts" },
   *   resourceClusters: (cluster) => cluster === home,
   *   uses: [{ type: { group: "", version: "v1", kind: "ConfigMap", plural: "configmaps" }, verbs: ["get"] }],
   *   async reconcile(request, scope) {
   *     for (const name of scope.clusters?.() ?? []) {
   *       if (name !== home) scope.logger.info("would act", { target: name, fanOut: request.name });
   *     }
   *   },
   * });
   * ```
   */
  resourceClusters?: (cluster: string) => boolean;
  /** What `reconcile` does with that resource through `scope.client` (`list` and `watch` are implied). Default none. */
  verbs?: Verb[];
  /** True when it posts Kubernetes Events through `scope.events`. Default false. */
  events?: boolean;
  /** Other resources it reads or writes (`scope.cluster(name).client(type)`), with their verbs. */
  uses?: ResourceUse[];
  /** Other resources whose changes queue its objects, mapped back to them (controller-runtime's `Watches`). */
  watches?: readonly WatchedResource[];
  /**
   * Child resources (controller-runtime's `Owns`, kube-rs's `Controller::owns`): a change or deletion of a child it
   * adopted (see `adopt`) queues the parent, so a level-based reconcile recreates a child deleted by hand. Each is
   * watched in every engaged cluster (or those its `clusters` accepts) with a label selector on adopt's
   * `operator-hub.dev/parent-resource` label, so the hub never lists or caches the kind's other objects; its `list`
   * and `watch` are pre-flighted, and its `verbs` are added to `uses`. A bare ResourceType owns it with no verbs.
   *
   * @example
   * ```ts
   * import { defineOperator, kinds } from "../../mod.ts";
   * export const op = defineOperator({
   *   name: "site",
   *   resource: { group: "examples.operator-hub.dev", version: "v1", kind: "Website", plural: "websites" },
   *   owns: [{ type: kinds.Deployment, verbs: ["get", "create"] }, kinds.ConfigMap],
   *   async reconcile(request, scope) {
   *     scope.logger.info("a Website or one of its children changed", { website: request.name });
   *   },
   * });
   * ```
   */
  owns?: readonly (ResourceType | OwnedResource)[];
  /**
   * Its objects to reconcile once it is ready in a cluster engaged (now or later): those that act on that
   * cluster, e.g. every object whose spec selects it. `cached(c)` lists its cached objects in cluster `c`.
   */
  onEngage?: (cluster: string, cached: (cluster: string) => StoredObject[]) => Request[];
  /** The finalizers it adds to its objects (removed by `operator-hub cleanup` when the hub is uninstalled). */
  finalizers?: readonly string[];
  /** What the cache keeps of each object. Default: metadata identity, `spec` and `status`. Not with `reads`. */
  project?: Projection;
  /**
   * The fields of its objects it reads, as dotted paths (`"status"`, `"spec.replicas"`, `"metadata.labels"`): the
   * cache keeps those and the metadata identity (name, namespace, uid, resourceVersion, generation,
   * deletionTimestamp), nothing else (see {@link fieldProjection}). A hub built with `checkReads` (`--check-reads`,
   * and every hub of the test kit) makes reading any other field of a cached or fetched object an
   * {@link UndeclaredFieldError} instead of a silent `undefined`.
   *
   * @example
   * ```ts
   * import { defineOperator } from "../../mod.ts";
   * export const op = defineOperator({
   *   name: "greeting",
   *   resource: { group: "examples.operator-hub.dev", version: "v1", kind: "Greeting", plural: "greetings" },
   *   reads: ["spec.who", "status.message"],
   *   verbs: ["patchStatus"],
   *   async reconcile(request, { client }) {
   *     const obj = client.cached(request);
   *     const who = (obj?.spec as { who?: string } | undefined)?.who ?? request.name;
   *     const message = (obj?.status as { message?: string } | undefined)?.message;
   *     if (obj && !message) await client.patchStatus(obj, { message: `Hello, ${who}` });
   *   },
   * });
   * ```
   */
  reads?: readonly string[];
  /** False when a reconcile of the cached object would certainly do nothing, so it is not queued. */
  needsReconcile?: (object: T) => boolean;
  /**
   * Validating admission handlers (Kopf's `@kopf.on.validate`, controller-runtime's Validator): each is one webhook
   * of the operator's ValidatingWebhookConfiguration, which a hub run with `--webhook-bind-address` serves and installs
   * in every engaged cluster. Return to allow, throw `AdmissionError` to refuse, `ctx.warn()` to warn. See
   * {@link AdmissionSpec} for the options and their defaults (failurePolicy Ignore: a hub that is down never blocks
   * writes).
   *
   * @example
   * ```ts
   * import { AdmissionError, defineOperator } from "../../mod.ts";
   * export const op = defineOperator({
   *   name: "site",
   *   resource: { group: "examples.operator-hub.dev", version: "v1", kind: "Website", plural: "websites" },
   *   validate: ({ spec }) => {
   *     if (typeof spec.image !== "string" || spec.image === "") throw new AdmissionError("spec.image is required");
   *   },
   *   async reconcile() {},
   * });
   * ```
   */
  validate?: ValidateHandlers<T>;
  /**
   * Mutating admission handlers (Kopf's `@kopf.on.mutate`, controller-runtime's Defaulter): change `ctx.object` in
   * place (or return the object to store); the hub answers the difference as a JSON Patch. Same options as `validate`.
   *
   * @example
   * ```ts
   * import { defineOperator } from "../../mod.ts";
   * export const op = defineOperator({
   *   name: "site",
   *   resource: { group: "examples.operator-hub.dev", version: "v1", kind: "Website", plural: "websites" },
   *   mutate: ({ spec, name }) => {
   *     spec.content ??= `Welcome to ${name}`;
   *   },
   *   async reconcile() {},
   * });
   * ```
   */
  mutate?: MutateHandlers<T>;
  /**
   * Brings one object to its desired state, reading current state only (level-based). Throwing means
   * a retry with backoff (a TerminalError: no retry); `{ requeueAfterMs }` looks again later.
   */
  reconcile(request: Request, scope: ReconcileScope<T>): Promise<ReconcileResult>;
}

const VERBS: readonly Verb[] = ["get", "list", "watch", "create", "update", "patch", "patchStatus", "delete", "apply"];
const NAME = /^[a-z0-9]([a-z0-9.-]*[a-z0-9])?$/;

/**
 * Defines an operator for a Hub, controller-runtime style: one level-based `reconcile(request, scope)`.
 * The RBAC pre-flight is derived from `resource`, `verbs`, `events` and `uses`; `scope.client`
 * refuses a verb that was not declared, so the pre-flight covers every call.
 *
 * @example
 * ```ts
 * import { defineOperator } from "./define_operator.ts";
 * export const greeting = defineOperator({
 *   name: "greeting",
 *   resource: { group: "examples.operator-hub.dev", version: "v1", kind: "Greeting", plural: "greetings" },
 *   verbs: ["patchStatus"],
 *   async reconcile(request, { client }) {
 *     const obj = client.cached(request);
 *     if (obj && !obj.status) await client.patchStatus(obj, { message: `Hello, ${request.name}` });
 *   },
 * });
 * ```
 */
export function defineOperator<T extends StoredObject = StoredObject>(definition: OperatorDefinition<T>): Operator<T> {
  const d = definition;
  if (typeof d.name !== "string" || !NAME.test(d.name)) {
    throw new OperatorDefinitionError(
      `invalid operator name ${JSON.stringify(d.name)}: use lowercase letters, digits, "-" and "."`,
    );
  }
  const r = d.resource;
  for (const field of ["version", "kind", "plural"] as const) {
    if (typeof r?.[field] !== "string" || r[field] === "") {
      throw new OperatorDefinitionError(
        `operator ${d.name}: resource.${field} must be a non-empty string, got ${JSON.stringify(r?.[field])}`,
      );
    }
  }
  if (typeof r.group !== "string") {
    throw new OperatorDefinitionError(`operator ${d.name}: resource.group must be a string ("" for the core group)`);
  }
  const owned = (d.owns ?? []).map((o): OwnedResource =>
    o !== null && typeof o === "object" && "type" in o ? o : { type: o as ResourceType }
  );
  for (const [i, o] of owned.entries()) {
    if (typeof o.type?.plural !== "string" || typeof o.type.group !== "string") {
      throw new OperatorDefinitionError(`operator ${d.name}: owns[${i}] is not a resource type (nor { type })`);
    }
    if (o.acrossClusters !== undefined && typeof o.acrossClusters !== "boolean") {
      throw new OperatorDefinitionError(
        `operator ${d.name}: owns[${i}].acrossClusters must be true or false, got ${JSON.stringify(o.acrossClusters)}`,
      );
    }
    if (o.metadataOnly !== undefined && typeof o.metadataOnly !== "boolean") {
      throw new OperatorDefinitionError(
        `operator ${d.name}: owns[${i}].metadataOnly must be true or false, got ${JSON.stringify(o.metadataOnly)}`,
      );
    }
  }
  for (const [i, w] of (d.watches ?? []).entries()) {
    if (w?.metadataOnly !== undefined && typeof w.metadataOnly !== "boolean") {
      throw new OperatorDefinitionError(
        `operator ${d.name}: watches[${i}].metadataOnly must be true or false, got ${JSON.stringify(w.metadataOnly)}`,
      );
    }
  }
  // An owned kind's verbs join its `uses` entry (a client takes the verbs of the first entry of its kind).
  const uses: ResourceUse[] = (d.uses ?? []).map((u) => ({ ...u }));
  for (const o of owned) {
    if (!o.verbs?.length) continue;
    const same = uses.find((u) => u.type.group === o.type.group && u.type.plural === o.type.plural);
    if (same) same.verbs = [...new Set([...same.verbs, ...o.verbs])];
    else uses.push({ type: o.type, verbs: [...o.verbs] });
  }
  for (const verb of [...(d.verbs ?? []), ...uses.flatMap((u) => u.verbs)]) {
    if (!VERBS.includes(verb)) {
      throw new OperatorDefinitionError(
        `operator ${d.name}: unknown verb ${JSON.stringify(verb)}; valid verbs: ${VERBS.join(", ")}`,
      );
    }
  }
  if (d.resourceClusters !== undefined && typeof d.resourceClusters !== "function") {
    throw new OperatorDefinitionError(
      `operator ${d.name}: resourceClusters must be a function (cluster name → boolean), got ${typeof d
        .resourceClusters}`,
    );
  }
  if (typeof d.reconcile !== "function") {
    throw new OperatorDefinitionError(`operator ${d.name}: reconcile must be a function`);
  }
  if (d.reads !== undefined) {
    const problem = readsProblem(d.reads);
    if (problem) throw new OperatorDefinitionError(`operator ${d.name}: ${problem}`);
    if (d.project !== undefined) {
      throw new OperatorDefinitionError(
        `operator ${d.name}: give reads or project, not both (reads builds the projection)`,
      );
    }
  }
  const webhooks = admissionWebhooks(d.name, { validate: d.validate, mutate: d.mutate });
  return {
    name: d.name,
    resource: { ...r },
    ...(webhooks.length ? { webhooks } : {}),
    resourceClusters: d.resourceClusters,
    verbs: [...(d.verbs ?? [])],
    events: d.events ?? false,
    uses,
    watches: [...(d.watches ?? []), ...owned.map((o) => ownedWatch(r, o))],
    ...(owned.length ? { adopts: true } : {}),
    onEngage: d.onEngage,
    ...(d.finalizers?.length ? { finalizers: [...d.finalizers] } : {}),
    ...(d.reads !== undefined ? { project: fieldProjection(d.reads), reads: [...d.reads] } : { project: d.project }),
    needsReconcile: d.needsReconcile,
    reconciler: { reconcile: (request, scope) => d.reconcile(request, scope) },
  };
}

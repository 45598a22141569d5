// validate and mutate handlers (Kopf's @kopf.on.validate / @kopf.on.mutate): their options, context and errors, and
// how they become the AdmissionWebhooks a hub serves and installs.

import type {
  AdmissionLabelSelector,
  AdmissionOperation,
  AdmissionRequest,
  AdmissionUserInfo,
  AdmissionVerdict,
  AdmissionWebhook,
  StoredObject,
} from "../runtime/mod.ts";
import { type Logger, silentLogger } from "../util/mod.ts";
import { OperatorDefinitionError } from "./operator_definition_error.ts";
import { jsonPatch } from "./json_patch.ts";

/**
 * Refuses the request under review (Kopf's `kopf.AdmissionError`): kubectl shows `message`, and `code` as the HTTP
 * status of the refusal. Any other error thrown by a handler is not a refusal but a failure to decide: the hub
 * answers HTTP 500 and the apiserver applies the webhook's `failurePolicy`.
 *
 * @example
 * ```ts
 * import { AdmissionError, defineHandlers } from "../../mod.ts";
 * export const op = defineHandlers({
 *   name: "site",
 *   resource: { group: "examples.operator-hub.dev", version: "v1", kind: "Website", plural: "websites" },
 *   validate: ({ spec }) => {
 *     if (String(spec.image).endsWith(":latest")) throw new AdmissionError("spec.image: pin a tag, not :latest");
 *   },
 * });
 * ```
 */
export class AdmissionError extends Error {
  /** Always "AdmissionError". */
  override name = "AdmissionError";
  /** The HTTP status of the refusal. */
  readonly code: number;
  /** `code` defaults to 400 Bad Request (Kopf's default is 500; a refused object is the client's error). */
  constructor(message: string, code = 400, options?: ErrorOptions) {
    super(message, options);
    this.code = code;
  }
}

/**
 * What a validate or mutate handler gets: the request under review.
 *
 * @example A validate handler written as a function of its own
 * ```ts
 * import { type AdmissionContext, AdmissionError, defineHandlers } from "../../sdk.ts";
 *
 * function pinnedImage({ spec, operation, warn }: AdmissionContext): void {
 *   if (typeof spec.image !== "string") throw new AdmissionError(`spec.image is required on ${operation}`);
 *   if (!spec.image.includes("@sha256:")) warn("spec.image: a digest is safer than a tag");
 * }
 * const site = defineHandlers({
 *   name: "site",
 *   resource: { group: "examples.operator-hub.dev", version: "v1", kind: "Website", plural: "websites" },
 *   validate: pinnedImage,
 * });
 * ```
 */
export interface AdmissionContext<T extends StoredObject = StoredObject> {
  /**
   * The object as it would be stored (for DELETE: as stored now). A mutate handler may change it in place; what it
   * holds when the handler returns (or the object returned) is the answer.
   */
  object: T;
  /** The object as stored now (UPDATE and DELETE). */
  oldObject: T | undefined;
  /**
   * `object.spec` (`{}` when absent; typed by a defined resource, though an object under review may not match its
   * schema yet); for a mutate handler, the very object to change in place.
   */
  spec: unknown extends T["spec"] ? Record<string, unknown> : NonNullable<T["spec"]>;
  /** CREATE, UPDATE, DELETE or CONNECT. */
  operation: AdmissionOperation;
  /** Who asked. */
  userInfo: AdmissionUserInfo;
  /** True for a server-side dry run: nothing will be stored, so do nothing but decide. */
  dryRun: boolean;
  /** The engaged cluster whose apiserver asked. */
  cluster: string;
  /** The object's namespace ("" for a cluster-scoped object). */
  namespace: string;
  /** The object's name ("" when the apiserver generates it). */
  name: string;
  /** The subresource under review (e.g. `status`), undefined for the object itself. */
  subresource: string | undefined;
  /** Adds a warning kubectl shows (`Warning: ...`), whatever the verdict. */
  warn(message: string): void;
  /** A logger with the cluster, namespace, name and webhook. */
  logger: Logger;
  /** Aborted at the webhook's timeout. */
  signal: AbortSignal;
}

/**
 * A validate handler: returns to allow, throws AdmissionError to refuse.
 *
 * @example
 * ```ts
 * import { AdmissionError, type ValidateFn } from "../../sdk.ts";
 *
 * const noLatest: ValidateFn = ({ spec }) => {
 *   if (String(spec.image).endsWith(":latest")) throw new AdmissionError("spec.image: pin a tag, not :latest");
 * };
 * ```
 */
export type ValidateFn<T extends StoredObject = StoredObject> = (
  context: AdmissionContext<T>,
) => void | Promise<void>;

/**
 * A mutate handler: changes `context.object` in place, or returns the object it wants stored.
 *
 * @example
 * ```ts
 * import type { MutateFn } from "../../sdk.ts";
 *
 * const defaults: MutateFn = ({ object, spec, name }) => {
 *   spec.content ??= `Welcome to ${name}`;
 *   object.metadata.labels = { ...object.metadata.labels, "app.kubernetes.io/name": name };
 * };
 * ```
 */
export type MutateFn<T extends StoredObject = StoredObject> = (
  context: AdmissionContext<T>,
) => T | void | Promise<T | void>;

/**
 * A validate or mutate handler with its options: one webhook of the operator's configuration, for its resource.
 *
 * Defaults, chosen so that a hub that is down never blocks a write: `failurePolicy: "Ignore"` (a write goes through
 * unchecked while the hub cannot answer; choose `"Fail"` for a check that must never be skipped, and accept that a
 * hub outage then refuses writes of this resource, of this resource only), `timeoutSeconds: 5` (the apiserver's
 * default is 10, which would hold a `kubectl apply` twice as long on a hub that hangs), `sideEffects: "None"`,
 * `matchPolicy: "Equivalent"` (the apiserver's default), `operations: ["CREATE", "UPDATE"]`.
 *
 * @example A check that must never be skipped, for production objects only
 * ```ts
 * import { AdmissionError, type AdmissionSpec, type ValidateFn } from "../../sdk.ts";
 *
 * const keepProd: AdmissionSpec<ValidateFn> = {
 *   id: "keep-prod",
 *   operations: ["DELETE"],
 *   labels: { tier: "prod" },
 *   failurePolicy: "Fail",
 *   fn: ({ name }) => {
 *     throw new AdmissionError(`${name} is a production site: remove its tier label first`, 403);
 *   },
 * };
 * ```
 */
export interface AdmissionSpec<F> {
  /** The handler. */
  fn: F;
  /** Unique per kind (validate, mutate) in the operator: a DNS label. Default: the function's name, kebab-cased. */
  id?: string;
  /** Default CREATE and UPDATE (Kopf's default is every operation). */
  operations?: AdmissionOperation[];
  /**
   * Only objects with these labels are sent, as Kopf's `labels=`: a string is that value, `true` any value, `false`
   * no such label. Sent to the apiserver as the webhook's `objectSelector`, so other objects never reach the hub.
   */
  labels?: Record<string, string | boolean>;
  /** A subresource of the resource (e.g. `status`, `scale`) instead of the object itself. */
  subresource?: string;
  /** Default `None`; `NoneOnDryRun` for a handler with side effects that it skips when `dryRun`. */
  sideEffects?: "None" | "NoneOnDryRun";
  /** Default `Ignore`. */
  failurePolicy?: "Ignore" | "Fail";
  /** 1 to 30; default 5. */
  timeoutSeconds?: number;
  /** Default `Equivalent`. */
  matchPolicy?: "Exact" | "Equivalent";
}

/**
 * One validate handler, with options, or several.
 *
 * @example
 * ```ts
 * import { AdmissionError, defineHandlers, type ValidateHandlers } from "../../sdk.ts";
 *
 * const validate: ValidateHandlers = [
 *   function requireImage({ spec }) {
 *     if (!spec.image) throw new AdmissionError("spec.image is required", 422);
 *   },
 *   { id: "audit-updates", operations: ["UPDATE"], fn: ({ warn }) => warn("updates of sites are audited") },
 * ];
 * const site = defineHandlers({
 *   name: "site",
 *   resource: { group: "examples.operator-hub.dev", version: "v1", kind: "Website", plural: "websites" },
 *   validate,
 * });
 * ```
 */
export type ValidateHandlers<T extends StoredObject = StoredObject> =
  | ValidateFn<T>
  | AdmissionSpec<ValidateFn<T>>
  | (ValidateFn<T> | AdmissionSpec<ValidateFn<T>>)[];

/**
 * One mutate handler, with options, or several.
 *
 * @example
 * ```ts
 * import { defineHandlers, type MutateHandlers } from "../../sdk.ts";
 *
 * const mutate: MutateHandlers = [
 *   function defaults({ spec }) {
 *     spec.replicas ??= 1;
 *   },
 *   {
 *     id: "stamp",
 *     operations: ["CREATE"],
 *     fn: ({ object, userInfo }) => {
 *       const annotations = object.metadata.annotations ?? {};
 *       object.metadata.annotations = { ...annotations, "example.dev/created-by": userInfo.username ?? "" };
 *     },
 *   },
 * ];
 * const site = defineHandlers({
 *   name: "site",
 *   resource: { group: "examples.operator-hub.dev", version: "v1", kind: "Website", plural: "websites" },
 *   mutate,
 * });
 * ```
 */
export type MutateHandlers<T extends StoredObject = StoredObject> =
  | MutateFn<T>
  | AdmissionSpec<MutateFn<T>>
  | (MutateFn<T> | AdmissionSpec<MutateFn<T>>)[];

const OPERATIONS: readonly AdmissionOperation[] = ["CREATE", "UPDATE", "DELETE", "CONNECT"];
const DNS_LABEL = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;

/** The webhooks of an operator's validate and mutate handlers; throws OperatorDefinitionError naming a bad option. */
export function admissionWebhooks<T extends StoredObject>(
  operator: string,
  handlers: { validate?: ValidateHandlers<T>; mutate?: MutateHandlers<T> },
): AdmissionWebhook[] {
  return [
    ...list(handlers.validate).map((h, i) => webhook(operator, "validating", h, i)),
    ...list(handlers.mutate).map((h, i) => webhook(operator, "mutating", h, i)),
  ].filter((w, i, all) => {
    const dup = all.findIndex((o) => o.type === w.type && o.id === w.id);
    if (dup !== i) {
      throw new OperatorDefinitionError(
        `operator ${operator}: two ${w.type === "validating" ? "validate" : "mutate"} handlers share the id ` +
          `"${w.id}": give one an \`id\``,
      );
    }
    return true;
  });
}

function list<F>(h: F | AdmissionSpec<F> | (F | AdmissionSpec<F>)[] | undefined): AdmissionSpec<F>[] {
  const items = h === undefined ? [] : Array.isArray(h) ? h : [h];
  return items.map((x) => (typeof x === "function" ? { fn: x } : x) as AdmissionSpec<F>);
}

function webhook<T extends StoredObject>(
  operator: string,
  type: "validating" | "mutating",
  spec: AdmissionSpec<ValidateFn<T> | MutateFn<T>>,
  index: number,
): AdmissionWebhook {
  const kind = type === "validating" ? "validate" : "mutate";
  const where = `operator ${operator}: ${kind} handler #${index}`;
  if (typeof spec?.fn !== "function") throw new OperatorDefinitionError(`${where} is not a function (nor { fn })`);
  const id = spec.id ?? (kebab(spec.fn.name) || `${kind}-${index}`);
  if (!DNS_LABEL.test(id)) {
    throw new OperatorDefinitionError(`${where}: id ${JSON.stringify(id)} must be a DNS label (a-z, 0-9, "-")`);
  }
  const operations = spec.operations ?? ["CREATE", "UPDATE"];
  const bad = operations.find((o) => !OPERATIONS.includes(o));
  if (bad !== undefined || operations.length === 0) {
    throw new OperatorDefinitionError(
      `${where}: invalid operation ${JSON.stringify(bad ?? "")}; choose from ${OPERATIONS.join(", ")}`,
    );
  }
  const timeoutSeconds = spec.timeoutSeconds ?? 5;
  if (!Number.isInteger(timeoutSeconds) || timeoutSeconds < 1 || timeoutSeconds > 30) {
    throw new OperatorDefinitionError(
      `${where}: timeoutSeconds must be an integer from 1 to 30, got ${timeoutSeconds}`,
    );
  }
  const choose = <V extends string>(value: V | undefined, valid: readonly V[], name: string): V => {
    const v = value ?? valid[0];
    if (!valid.includes(v)) {
      throw new OperatorDefinitionError(`${where}: ${name} must be ${valid.join(" or ")}, got ${JSON.stringify(v)}`);
    }
    return v;
  };
  const sideEffects = choose(spec.sideEffects, ["None", "NoneOnDryRun"] as const, "sideEffects");
  const failurePolicy = choose(spec.failurePolicy, ["Ignore", "Fail"] as const, "failurePolicy");
  const matchPolicy = choose(spec.matchPolicy, ["Equivalent", "Exact"] as const, "matchPolicy");
  const fn = spec.fn;
  return {
    id,
    type,
    operations: [...operations],
    ...(spec.subresource ? { subresource: spec.subresource } : {}),
    ...(spec.labels ? { objectSelector: selectorOf(spec.labels, where) } : {}),
    sideEffects,
    failurePolicy,
    timeoutSeconds,
    matchPolicy,
    review: (request, signal) => review(type, fn, request, signal),
  };
}

/** Kopf's `labels=` as a label selector: values match exactly, `true` Exists, `false` DoesNotExist. */
export function selectorOf(labels: Record<string, string | boolean>, where = "labels"): AdmissionLabelSelector {
  const matchLabels: Record<string, string> = {};
  const matchExpressions: NonNullable<AdmissionLabelSelector["matchExpressions"]> = [];
  for (const [key, value] of Object.entries(labels)) {
    if (typeof value === "string") matchLabels[key] = value;
    else if (typeof value === "boolean") matchExpressions.push({ key, operator: value ? "Exists" : "DoesNotExist" });
    else throw new OperatorDefinitionError(`${where}: label ${key} must be a string or a boolean`);
  }
  return {
    ...(Object.keys(matchLabels).length ? { matchLabels } : {}),
    ...(matchExpressions.length ? { matchExpressions } : {}),
  };
}

function kebab(name: string): string {
  return name.replace(/([a-z0-9])([A-Z])/g, "$1-$2").replace(/[^A-Za-z0-9-]+/g, "-").toLowerCase()
    .replace(/^-+|-+$/g, "").slice(0, 63);
}

async function review<T extends StoredObject>(
  type: "validating" | "mutating",
  fn: ValidateFn<T> | MutateFn<T>,
  request: AdmissionRequest,
  signal: AbortSignal,
): Promise<AdmissionVerdict> {
  const original = (request.object ?? request.oldObject ?? { metadata: {} }) as T;
  const object = structuredClone(original);
  (object as StoredObject).spec ??= {};
  const hadSpec = original.spec !== undefined;
  const warnings: string[] = [];
  const logger = request.logger ?? silentLogger();
  const context: AdmissionContext<T> = {
    object,
    oldObject: request.oldObject as T | undefined,
    spec: object.spec as AdmissionContext<T>["spec"],
    operation: request.operation,
    userInfo: request.userInfo,
    dryRun: request.dryRun,
    cluster: request.cluster,
    namespace: request.namespace,
    name: request.name,
    subresource: request.subresource,
    warn: (message) => void warnings.push(String(message)),
    logger,
    signal,
  };
  let returned: T | void;
  try {
    returned = await fn(context);
  } catch (err) {
    if (!(err instanceof AdmissionError)) throw err;
    return { allowed: false, code: err.code, message: err.message, ...(warnings.length ? { warnings } : {}) };
  }
  const verdict: AdmissionVerdict = { allowed: true, ...(warnings.length ? { warnings } : {}) };
  if (type === "validating" || request.operation === "DELETE") return verdict;
  const result = (returned ?? object) as T;
  // An empty spec the handler left alone is not an addition.
  if (!hadSpec && result.spec && typeof result.spec === "object" && !Object.keys(result.spec).length) {
    delete result.spec;
  }
  const patch = jsonPatch(original, result);
  return patch.length ? { ...verdict, patch } : verdict;
}

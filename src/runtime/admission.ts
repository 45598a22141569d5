// The admission contract between an operator and the hub: the webhooks an operator declares, what a review hands one
// and what it answers. No HTTP and no AdmissionReview JSON here (the hub's admission server owns both).

import type { Logger } from "../util/mod.ts";
import type { StoredObject } from "./cache/store.ts";

/**
 * The operations an admission webhook may be called for (AdmissionReview's `request.operation`).
 *
 * @example
 * ```ts
 * import type { AdmissionOperation } from "../../sdk.ts";
 * const writes: AdmissionOperation[] = ["CREATE", "UPDATE"];
 * console.log(writes.includes("DELETE")); // false
 * ```
 */
export type AdmissionOperation = "CREATE" | "UPDATE" | "DELETE" | "CONNECT";

/**
 * Who made the request under review (AdmissionReview's `request.userInfo`).
 *
 * @example
 * ```ts
 * import type { AdmissionUserInfo } from "../../sdk.ts";
 * const isAdmin = (user: AdmissionUserInfo): boolean => user.groups?.includes("system:masters") ?? false;
 * console.log(isAdmin({ username: "jane@example.com", groups: ["system:authenticated"] })); // false
 * ```
 */
export interface AdmissionUserInfo {
  /** The user's name, e.g. `system:admin` or `jane@example.com`. */
  username?: string;
  /** The user's uid, when the authenticator set one. */
  uid?: string;
  /** The user's groups. */
  groups?: string[];
  /** Further attributes the authenticator set. */
  extra?: Record<string, string[]>;
}

/**
 * One request under review, already checked by the hub (shape, sizes) and tagged with the cluster that sent it.
 *
 * @example
 * ```ts
 * import type { AdmissionRequest } from "../../sdk.ts";
 * // What a webhook's unit test hands its `review`.
 * const request: AdmissionRequest = {
 *   uid: "705ab4f5-6393-11e8-b7cc-42010a800002",
 *   cluster: "prod",
 *   operation: "CREATE",
 *   object: { metadata: { name: "hello", namespace: "web" }, spec: { who: "world" } },
 *   namespace: "web",
 *   name: "hello",
 *   userInfo: { username: "jane@example.com", groups: ["system:authenticated"] },
 *   dryRun: false,
 * };
 * ```
 */
export interface AdmissionRequest {
  /** AdmissionReview's `request.uid`, echoed in the answer. */
  uid: string;
  /** The engaged cluster whose apiserver called (from the webhook's URL path). */
  cluster: string;
  /** What is being done. */
  operation: AdmissionOperation;
  /** The object as it would be stored (absent for DELETE). */
  object?: StoredObject;
  /** The object as stored now (UPDATE and DELETE). */
  oldObject?: StoredObject;
  /** The object's namespace ("" for a cluster-scoped object). */
  namespace: string;
  /** The object's name ("" on a CREATE whose name the apiserver generates). */
  name: string;
  /** The subresource, e.g. `status`; undefined for the object itself. */
  subresource?: string;
  /** Who asked. */
  userInfo: AdmissionUserInfo;
  /** True for `kubectl apply --dry-run=server`: nothing will be stored, so a handler must have no side effects. */
  dryRun: boolean;
  /** Where the handler logs (the hub's logger with the cluster, object and webhook); silent when absent. */
  logger?: Logger;
}

/**
 * One JSON Patch (RFC 6902) operation, as a mutating webhook answers.
 *
 * @example
 * ```ts
 * import { jsonPatch, type JsonPatchOperation } from "../../sdk.ts";
 * const ops: JsonPatchOperation[] = [
 *   { op: "add", path: "/spec/who", value: "world" },
 *   { op: "remove", path: "/metadata/labels/stale" },
 * ];
 * const diff: JsonPatchOperation[] = jsonPatch({ replicas: 1 }, { replicas: 3 });
 * console.log(ops.length, diff); // 2 [ { op: "replace", path: "/replicas", value: 3 } ]
 * ```
 */
export type JsonPatchOperation =
  | { op: "add" | "replace"; path: string; value: unknown }
  | { op: "remove"; path: string };

/**
 * A review's answer.
 *
 * @example
 * ```ts
 * import type { AdmissionVerdict } from "../../sdk.ts";
 * const refused: AdmissionVerdict = { allowed: false, code: 422, message: "spec.size: must be positive, got -1" };
 * const defaulted: AdmissionVerdict = {
 *   allowed: true,
 *   warnings: ["spec.who was not set: greeting the world"],
 *   patch: [{ op: "add", path: "/spec/who", value: "world" }],
 * };
 * ```
 */
export interface AdmissionVerdict {
  /** Whether the request may go on. */
  allowed: boolean;
  /** The HTTP code of a refusal (shown by kubectl beside `message`). */
  code?: number;
  /** Why it was refused. */
  message?: string;
  /** Shown by kubectl as `Warning: ...`, allowed or not. */
  warnings?: string[];
  /** Mutating webhooks: the changes to the object. */
  patch?: JsonPatchOperation[];
}

/**
 * A label selector, as a webhook configuration's `objectSelector` takes it.
 *
 * @example
 * ```ts
 * import type { AdmissionLabelSelector } from "../../sdk.ts";
 * // Only objects labelled app=web in the frontend or edge tier are sent to the webhook.
 * const selector: AdmissionLabelSelector = {
 *   matchLabels: { app: "web" },
 *   matchExpressions: [{ key: "tier", operator: "In", values: ["frontend", "edge"] }],
 * };
 * ```
 */
export interface AdmissionLabelSelector {
  /** Labels that must have exactly these values. */
  matchLabels?: Record<string, string>;
  /** Further requirements: `Exists`, `DoesNotExist`, `In`, `NotIn`. */
  matchExpressions?: { key: string; operator: "In" | "NotIn" | "Exists" | "DoesNotExist"; values?: string[] }[];
}

/**
 * One admission webhook of an operator: one entry of its ValidatingWebhookConfiguration or
 * MutatingWebhookConfiguration, for the operator's resource.
 *
 * @example
 * ```ts
 * import type { AdmissionWebhook } from "../../sdk.ts";
 * // defineHandlers' `validate` builds these; one written by hand refuses deletes except dry runs.
 * const noDeletes: AdmissionWebhook = {
 *   id: "no-deletes",
 *   type: "validating",
 *   operations: ["DELETE"],
 *   sideEffects: "None",
 *   failurePolicy: "Fail",
 *   timeoutSeconds: 5,
 *   matchPolicy: "Equivalent",
 *   review: (request) =>
 *     Promise.resolve(
 *       request.dryRun ? { allowed: true } : { allowed: false, code: 403, message: `${request.name} may not be deleted` },
 *     ),
 * };
 * ```
 */
export interface AdmissionWebhook {
  /** Unique among the operator's webhooks of its type: lowercase letters, digits and "-" (a DNS label). */
  readonly id: string;
  /** Which configuration it goes into. */
  readonly type: "validating" | "mutating";
  /** The operations it is called for. */
  readonly operations: readonly AdmissionOperation[];
  /** Called for this subresource of the resource (e.g. `status`) instead of the object itself. */
  readonly subresource?: string;
  /** Only objects whose labels match are sent (`objectSelector`). */
  readonly objectSelector?: AdmissionLabelSelector;
  /** `None`, or `NoneOnDryRun` for a handler that has side effects except on dry runs. */
  readonly sideEffects: "None" | "NoneOnDryRun";
  /** What the apiserver does when the hub cannot answer (down, too slow, a handler crashed). */
  readonly failurePolicy: "Ignore" | "Fail";
  /** How long the apiserver waits for the answer, 1 to 30. */
  readonly timeoutSeconds: number;
  /** `Equivalent`: also called for the resource reached through another group or version. */
  readonly matchPolicy: "Exact" | "Equivalent";
  /**
   * Decides one request. Throwing means the hub could not decide: it answers HTTP 500 and the apiserver applies
   * `failurePolicy`. `signal` aborts at the webhook's timeout.
   */
  review(request: AdmissionRequest, signal: AbortSignal): Promise<AdmissionVerdict>;
}

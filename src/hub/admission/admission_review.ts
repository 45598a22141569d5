// AdmissionReview v1 on the wire: the webhook path, checking the untrusted request, and the answer. Pure (the body is
// read by review_body.ts).

import type { AdmissionOperation, AdmissionRequest, AdmissionVerdict, StoredObject } from "../../runtime/mod.ts";
import { isRecord } from "../../util/mod.ts";

/** The largest AdmissionReview body read (object and oldObject of an object up to etcd's 1.5 MiB, and room). */
export const MAX_REVIEW_BYTES = 4 * 1024 * 1024;
/** At most this many warnings of at most this many characters are answered (the apiserver truncates too). */
const MAX_WARNINGS = 16;
const MAX_WARNING_CHARS = 512;

/** Where one webhook is served: the operator, the webhook and the cluster whose apiserver calls it. */
export interface WebhookRoute {
  operator: string;
  type: "validating" | "mutating";
  id: string;
  cluster: string;
}

/** The path of a webhook for one cluster: `/admission/OPERATOR/validating|mutating/ID/CLUSTER`. */
export function webhookPath(route: WebhookRoute): string {
  return `/admission/${route.operator}/${route.type}/${route.id}/${encodeURIComponent(route.cluster)}`;
}

const NAME = /^[a-z0-9]([a-z0-9.-]{0,251}[a-z0-9])?$/;
const CLUSTER = /^[A-Za-z0-9]([A-Za-z0-9._@:-]{0,251}[A-Za-z0-9])?$/;

/** The route a path names, or undefined when it names none (a 404). */
export function parseWebhookPath(path: string): WebhookRoute | undefined {
  const parts = path.split("/");
  if (parts.length !== 6 || parts[0] !== "" || parts[1] !== "admission") return undefined;
  const [, , operator, type, id, rawCluster] = parts;
  let cluster: string;
  try {
    cluster = decodeURIComponent(rawCluster);
  } catch {
    return undefined;
  }
  if (type !== "validating" && type !== "mutating") return undefined;
  if (!NAME.test(operator) || !NAME.test(id) || !CLUSTER.test(cluster)) return undefined;
  return { operator, type, id, cluster };
}

/** A request the hub refuses to review: the status to answer and a one-line reason (never the body's content). */
export class ReviewInputError extends Error {
  override name = "ReviewInputError";
  readonly status: number;
  constructor(status: number, message: string) {
    super(message);
    this.status = status;
  }
}

const OPERATIONS = new Set<AdmissionOperation>(["CREATE", "UPDATE", "DELETE", "CONNECT"]);

/**
 * Checks an AdmissionReview body and returns the request for the webhook, tagged with `cluster`.
 *
 * Guarantees: anything that is not an `admission.k8s.io/v1` AdmissionReview with a string `request.uid` (at most 128
 * characters), a known `operation`, objects that are JSON objects with `metadata`, and string names, throws
 * ReviewInputError 400 naming the field (never its value).
 */
export function parseReview(body: Uint8Array, cluster: string): AdmissionRequest {
  let doc: unknown;
  try {
    doc = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(body));
  } catch {
    throw new ReviewInputError(400, "the body is not JSON: send an admission.k8s.io/v1 AdmissionReview");
  }
  const review = requiredRecord(doc, "the body");
  if (review.apiVersion !== "admission.k8s.io/v1" || review.kind !== "AdmissionReview") {
    throw new ReviewInputError(400, "the body is not an admission.k8s.io/v1 AdmissionReview (apiVersion, kind)");
  }
  const r = requiredRecord(review.request, "request");
  if (typeof r.uid !== "string" || r.uid === "" || r.uid.length > 128) {
    throw new ReviewInputError(400, "request.uid must be a string of 1 to 128 characters");
  }
  if (!OPERATIONS.has(r.operation as AdmissionOperation)) {
    throw new ReviewInputError(400, "request.operation must be CREATE, UPDATE, DELETE or CONNECT");
  }
  const object = optionalObject(r.object, "request.object");
  const oldObject = optionalObject(r.oldObject, "request.oldObject");
  const userInfo = r.userInfo === undefined ? {} : requiredRecord(r.userInfo, "request.userInfo");
  for (const f of ["namespace", "name", "subResource"] as const) {
    if (r[f] !== undefined && typeof r[f] !== "string") {
      throw new ReviewInputError(400, `request.${f} must be a string`);
    }
  }
  if (typeof userInfo.username !== "undefined" && typeof userInfo.username !== "string") {
    throw new ReviewInputError(400, "request.userInfo.username must be a string");
  }
  if (userInfo.groups !== undefined && !(Array.isArray(userInfo.groups) && userInfo.groups.every(isString))) {
    throw new ReviewInputError(400, "request.userInfo.groups must be a list of strings");
  }
  const meta = (object ?? oldObject)?.metadata;
  return {
    uid: r.uid,
    cluster,
    operation: r.operation as AdmissionOperation,
    ...(object ? { object } : {}),
    ...(oldObject ? { oldObject } : {}),
    namespace: (r.namespace as string | undefined) ?? meta?.namespace ?? "",
    name: (r.name as string | undefined) ?? meta?.name ?? "",
    ...(r.subResource ? { subresource: r.subResource as string } : {}),
    userInfo: {
      ...(typeof userInfo.username === "string" ? { username: userInfo.username } : {}),
      ...(typeof userInfo.uid === "string" ? { uid: userInfo.uid } : {}),
      ...(userInfo.groups ? { groups: userInfo.groups as string[] } : {}),
      ...(userInfo.extra && typeof userInfo.extra === "object"
        ? { extra: userInfo.extra as Record<string, string[]> }
        : {}),
    },
    dryRun: r.dryRun === true,
  };
}

/** `v` as a plain object, or a 400 naming `what`. */
function requiredRecord(v: unknown, what: string): Record<string, unknown> {
  if (!isRecord(v)) throw new ReviewInputError(400, `${what} must be an object`);
  return v;
}

function optionalObject(v: unknown, what: string): StoredObject | undefined {
  if (v === undefined || v === null) return undefined;
  const o = requiredRecord(v, what);
  const meta = requiredRecord(o.metadata ?? {}, `${what}.metadata`);
  for (const f of ["name", "namespace", "generateName"]) {
    if (meta[f] !== undefined && typeof meta[f] !== "string") {
      throw new ReviewInputError(400, `${what}.metadata.${f} must be a string`);
    }
  }
  return { ...o, metadata: meta } as unknown as StoredObject;
}

function isString(v: unknown): v is string {
  return typeof v === "string";
}

/** The AdmissionReview answering `uid` with `verdict`: a refusal's code and message, warnings, a JSON Patch. */
export function reviewResponse(uid: string, verdict: AdmissionVerdict): Record<string, unknown> {
  const warnings = (verdict.warnings ?? []).slice(0, MAX_WARNINGS).map((w) =>
    w.replace(/[\r\n\t]+/g, " ").slice(0, MAX_WARNING_CHARS)
  );
  const response: Record<string, unknown> = { uid, allowed: verdict.allowed };
  if (!verdict.allowed) {
    response.status = { code: verdict.code ?? 400, message: verdict.message ?? "refused" };
  }
  if (warnings.length) response.warnings = warnings;
  if (verdict.allowed && verdict.patch?.length) {
    response.patchType = "JSONPatch";
    response.patch = base64(new TextEncoder().encode(JSON.stringify(verdict.patch)));
  }
  return { apiVersion: "admission.k8s.io/v1", kind: "AdmissionReview", response };
}

function base64(bytes: Uint8Array): string {
  let bin = "";
  for (let i = 0; i < bytes.length; i += 0x8000) bin += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(bin);
}

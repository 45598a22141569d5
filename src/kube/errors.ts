// Error classes of src/kube: bad configuration, failed authentication, API status errors and transport failures.

import { redact } from "../util/mod.ts";

/**
 * A kubeconfig, context selection or in-cluster setup that cannot be used. The message is one
 * line that names the file or context and, where it helps, lists the valid choices. The CLI
 * exits with code 2 on it. It never contains credentials.
 *
 * @example
 * ```ts
 * import { ConfigError, loadContexts } from "../../kube.ts";
 *
 * try {
 *   const [access] = (await loadContexts({ env: Deno.env.toObject() })).select(["no-such-context"]);
 *   console.log(access.server);
 * } catch (err) {
 *   if (!(err instanceof ConfigError)) throw err;
 *   console.error(err.message); // names the unknown context and lists the known ones
 *   Deno.exit(2);
 * }
 * ```
 */
export class ConfigError extends Error {
  /** Always "ConfigError". */
  override name = "ConfigError";
}

/**
 * Credentials could not be obtained: an exec credential plugin failed, a token file vanished.
 * The message names the plugin command or file, never the plugin's output or a token.
 *
 * @example
 * ```ts
 * import { AuthError, type KubeClient, namespacePath } from "../../kube.ts";
 *
 * declare const client: KubeClient;
 * try {
 *   await client.request("GET", namespacePath());
 * } catch (err) {
 *   if (!(err instanceof AuthError)) throw err;
 *   console.error(`no credentials for ${err.cluster}: ${err.message}`); // e.g. the exec plugin failed
 * }
 * ```
 */
export class AuthError extends Error {
  /** Always "AuthError". */
  override name = "AuthError";
  /** Context the credentials were for. */
  readonly cluster: string;

  /** An error about `cluster`'s credentials; `message` must hold no credential. */
  constructor(cluster: string, message: string, options?: ErrorOptions) {
    super(message, options);
    this.cluster = cluster;
  }
}

/** Fields of an {@link ApiError}. */
export interface ApiErrorInit {
  /** The request's HTTP method. */
  method: string;
  /** Request path without the query string. */
  path: string;
  /** HTTP status, or the `code` of a Status object carried by a watch ERROR event. */
  status: number;
  /** The Status `reason`, e.g. `Conflict`, `Expired`, `Unauthorized`; derived from `status` if absent. */
  reason?: string;
  /** The Status `message` as the server wrote it. */
  statusMessage?: string;
  /** The Status `details`, as the server sent them. */
  details?: unknown;
  /** The `Retry-After` header (or the Status' `retryAfterSeconds`), seconds. */
  retryAfterSeconds?: number;
}

/**
 * The API server answered with a non-2xx status (or a watch stream carried an ERROR Status).
 * The message reads like `PATCH /apis/g/v1/namespaces/a/uuid/x/status: 409 Conflict: <message>`.
 * Request headers never appear in it.
 *
 * @example
 * ```ts
 * import { ApiError, type KubeClient, namespacePath } from "../../kube.ts";
 *
 * declare const client: KubeClient;
 * try {
 *   const shop = { apiVersion: "v1", kind: "Namespace", metadata: { name: "shop" } };
 *   await client.request("POST", namespacePath(), { body: shop });
 * } catch (err) {
 *   if (!(err instanceof ApiError) || err.reason !== "AlreadyExists") throw err;
 *   console.log(err.status, err.statusMessage); // 409 namespaces "shop" already exists
 * }
 * ```
 */
export class ApiError extends Error {
  /** Always "ApiError". */
  override name = "ApiError";
  /** The request's HTTP method. */
  readonly method: string;
  /** The request path, without the query string. */
  readonly path: string;
  /** The HTTP status (or the watch ERROR Status' `code`). */
  readonly status: number;
  /** The Status `reason` (e.g. `Conflict`), or one derived from `status`. */
  readonly reason: string;
  /** The Status `message`, redacted; "" when there was none. */
  readonly statusMessage: string;
  /** The Status `details`, as the server sent them. */
  readonly details: unknown;
  /** How long the server asked the client to wait before retrying, seconds, when it did. */
  readonly retryAfterSeconds: number | undefined;

  /** An error for the answer `init` describes. */
  constructor(init: ApiErrorInit, options?: ErrorOptions) {
    const reason = init.reason || defaultReason(init.status);
    const statusMessage = init.statusMessage ? redact(init.statusMessage) : "";
    super(
      `${init.method} ${init.path}: ${init.status} ${reasonPhrase(init.status)}${
        statusMessage ? `: ${statusMessage}` : ""
      }`,
      options,
    );
    this.method = init.method;
    this.path = init.path;
    this.status = init.status;
    this.reason = reason;
    this.statusMessage = statusMessage;
    this.details = init.details;
    this.retryAfterSeconds = init.retryAfterSeconds;
  }
}

/**
 * The request never got an HTTP answer: connection refused, DNS, TLS, timeout, a stream that
 * broke or stalled. The cause is chained. The message names the method, path and server.
 *
 * @example
 * ```ts
 * import { type KubeClient, namespacePath, TransportError } from "../../kube.ts";
 *
 * declare const client: KubeClient;
 * try {
 *   await client.request("GET", namespacePath(), { timeoutMs: 2_000 });
 * } catch (err) {
 *   if (!(err instanceof TransportError)) throw err;
 *   console.error(err.timeout ? `no answer within 2 s: ${err.message}` : `unreachable: ${err.message}`);
 * }
 * ```
 */
export class TransportError extends Error {
  /** Always "TransportError". */
  override name = "TransportError";
  /** True when the request timed out (no response, or a watch that outlived its deadline). */
  readonly timeout: boolean;

  /** A failure described by `message` (its cause chained in `options.cause`); `timeout` marks a timeout. */
  constructor(message: string, options?: ErrorOptions & { timeout?: boolean }) {
    super(message, options);
    this.timeout = options?.timeout ?? false;
  }
}

/**
 * The server sent a response body or a watch event larger than the client's `maxObjectBytes`: the client refused it
 * without reading the rest and closed the connection. The message names the request, the server, the limit and the
 * size seen (or "more than" the limit), never content.
 *
 * @example
 * ```ts
 * import { type KubeClient, type ListPage, TooLargeError } from "../../kube.ts";
 *
 * declare const client: KubeClient;
 * async function firstPage(path: string, limit = 500): Promise<ListPage> {
 *   try {
 *     return await client.listPage(path, { limit });
 *   } catch (err) {
 *     if (!(err instanceof TooLargeError) || limit === 1) throw err;
 *     return firstPage(path, Math.ceil(limit / 2)); // the page was over maxObjectBytes: ask for fewer objects
 *   }
 * }
 * ```
 */
export class TooLargeError extends Error {
  /** Always "TooLargeError". */
  override name = "TooLargeError";
  /** The limit that was exceeded, bytes. */
  readonly limitBytes: number;
  /** The size the server declared (Content-Length), when it did; otherwise only "more than limitBytes" is known. */
  readonly declaredBytes: number | undefined;

  /** A refused body of more than `limitBytes` (`declaredBytes` when the server declared its size). */
  constructor(message: string, limitBytes: number, declaredBytes: number | undefined, options?: ErrorOptions) {
    super(message, options);
    this.limitBytes = limitBytes;
    this.declaredBytes = declaredBytes;
  }
}

/**
 * The HTTP status a failure carries, if any: an ApiError's, or the numeric `status` of any other
 * error (a test double, a Status-shaped failure). The one place errors are classified by status.
 *
 * @example
 * ```ts
 * import { httpStatusOf, type KubeClient } from "../../kube.ts";
 *
 * declare const client: KubeClient;
 * try {
 *   await client.request("DELETE", "/api/v1/namespaces/shop/configmaps/site");
 * } catch (err) {
 *   if (httpStatusOf(err) !== 404) throw err; // already gone is fine; no HTTP answer at all (undefined) is not
 * }
 * ```
 */
export function httpStatusOf(err: unknown): number | undefined {
  const s = (err as { status?: unknown })?.status;
  return typeof s === "number" ? s : undefined;
}

/**
 * True when the API server refused a write because the object changed since it was read
 * (409 Conflict): read it again and decide again.
 *
 * @example
 * ```ts
 * import { isConflict } from "./errors.ts";
 * try { await Promise.reject(Object.assign(new Error("conflict"), { status: 409 })); }
 * catch (err) { if (!isConflict(err)) throw err; }
 * ```
 */
export function isConflict(err: unknown): boolean {
  return httpStatusOf(err) === 409;
}

/**
 * True when the object (or its resource) does not exist (404 Not Found).
 *
 * @example
 * ```ts
 * import { isNotFound } from "./errors.ts";
 * console.log(isNotFound(Object.assign(new Error("gone"), { status: 404 }))); // true
 * ```
 */
export function isNotFound(err: unknown): boolean {
  return httpStatusOf(err) === 404;
}

/**
 * The server's Retry-After of a failure (429, 503), in milliseconds, if it sent one.
 *
 * @example
 * ```ts
 * import { type KubeClient, retryAfterMsOf } from "../../kube.ts";
 *
 * declare const client: KubeClient;
 * declare const path: string;
 * const read = () => client.request("GET", path);
 * const body = await read().catch(async (err) => {
 *   await new Promise((r) => setTimeout(r, retryAfterMsOf(err) ?? 1_000)); // the server's Retry-After, else 1 s
 *   return read();
 * });
 * ```
 */
export function retryAfterMsOf(err: unknown): number | undefined {
  const s = (err as { retryAfterSeconds?: unknown })?.retryAfterSeconds;
  return typeof s === "number" && Number.isFinite(s) && s >= 0 ? s * 1000 : undefined;
}

/**
 * The health states a failure can put a cluster (or one operator in it) in; see `failureStateOf`.
 *
 * @example
 * ```ts
 * import { type FailureState, failureStateOf } from "../../kube.ts";
 *
 * const advice: Record<FailureState, string> = {
 *   unreachable: "check the network and the server URL",
 *   unauthorized: "renew the credentials",
 *   forbidden: "grant the RBAC rules",
 *   "missing-crd": "install the CRD",
 *   "too-large": "raise --max-object-bytes",
 * };
 * declare const err: unknown;
 * console.log(advice[failureStateOf(err)]);
 * ```
 */
export type FailureState = "unreachable" | "unauthorized" | "forbidden" | "missing-crd" | "too-large";

/**
 * Maps a failure to the health state it means.
 *
 * @example
 * ```ts
 * import { failureStateOf, type KubeClient, namespacePath } from "../../kube.ts";
 *
 * declare const client: KubeClient;
 * const health = await client.request("GET", namespacePath()).then(() => "ok", failureStateOf);
 * console.log(client.cluster, health); // "ok", or "unreachable", "unauthorized", "forbidden", ...
 * ```
 */
export function failureStateOf(err: unknown): FailureState {
  // No credentials at all (an exec plugin that fails or hangs, a vanished token file) is a 401 in all but name.
  if (err instanceof AuthError || (err as { name?: unknown })?.name === "AuthError") return "unauthorized";
  // A body or watch event over --max-object-bytes: the server answers, but with something the hub will not hold.
  if (err instanceof TooLargeError || (err as { name?: unknown })?.name === "TooLargeError") return "too-large";
  const status = httpStatusOf(err);
  if (status === 401) return "unauthorized";
  if (status === 403) return "forbidden";
  if (status === 404) return "missing-crd";
  return "unreachable";
}

/** The Status reason the API server uses for an HTTP status when none was sent. */
function defaultReason(status: number): string {
  return REASONS[status] ?? (status >= 500 ? "InternalError" : status >= 400 ? "BadRequest" : "Unknown");
}

/** The standard HTTP reason phrase (HTTP/2 responses carry none). */
function reasonPhrase(status: number): string {
  return PHRASES[status] ?? (status >= 500 ? "Server Error" : status >= 400 ? "Client Error" : "");
}

const REASONS: Record<number, string> = {
  400: "BadRequest",
  401: "Unauthorized",
  403: "Forbidden",
  404: "NotFound",
  405: "MethodNotAllowed",
  406: "NotAcceptable",
  409: "Conflict",
  410: "Expired",
  413: "RequestEntityTooLarge",
  415: "UnsupportedMediaType",
  422: "Invalid",
  429: "TooManyRequests",
  500: "InternalError",
  503: "ServiceUnavailable",
  504: "Timeout",
};

const PHRASES: Record<number, string> = {
  400: "Bad Request",
  401: "Unauthorized",
  403: "Forbidden",
  404: "Not Found",
  405: "Method Not Allowed",
  406: "Not Acceptable",
  408: "Request Timeout",
  409: "Conflict",
  410: "Gone",
  413: "Payload Too Large",
  415: "Unsupported Media Type",
  422: "Unprocessable Entity",
  429: "Too Many Requests",
  500: "Internal Server Error",
  502: "Bad Gateway",
  503: "Service Unavailable",
  504: "Gateway Timeout",
};

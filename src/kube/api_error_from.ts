// An ApiError from an apiserver's error response: its metav1.Status body, or the first line of anything else.

import { isRecord } from "../util/mod.ts";
import { ApiError } from "./errors.ts";

/**
 * Builds an ApiError from an error response. `body` is the raw response text or an already
 * parsed object; a `metav1.Status` body supplies reason, message and details. `retryAfter` is
 * the Retry-After header, which wins over `details.retryAfterSeconds`.
 */
export function apiErrorFrom(
  request: { method: string; path: string },
  status: number,
  options: { body?: unknown; retryAfter?: string | null } = {},
): ApiError {
  const { body, retryAfter: retryAfterHeader } = options;
  let parsed: unknown = body;
  if (typeof body === "string") {
    try {
      parsed = JSON.parse(body);
    } catch {
      parsed = undefined;
    }
  }
  const st = isRecord(parsed) && (parsed.kind === "Status" || "reason" in parsed || "message" in parsed)
    ? parsed
    : undefined;
  const details = st?.details;
  const fromDetails = isRecord(details) && typeof details.retryAfterSeconds === "number"
    ? details.retryAfterSeconds
    : undefined;
  const fromHeader = retryAfterHeader && /^\d+$/.test(retryAfterHeader.trim())
    ? Number(retryAfterHeader.trim())
    : undefined;
  let statusMessage = typeof st?.message === "string" ? st.message : undefined;
  if (statusMessage === undefined && typeof body === "string" && st === undefined) {
    // Not a Status (a proxy's HTML page, plain text): keep a short first line for context.
    const first = body.trim().split("\n", 1)[0] ?? "";
    statusMessage = first.length > 200 ? `${first.slice(0, 200)}...` : first || undefined;
  }
  return new ApiError({
    method: request.method,
    path: request.path,
    status,
    reason: typeof st?.reason === "string" && st.reason ? st.reason : undefined,
    statusMessage,
    details,
    retryAfterSeconds: fromHeader ?? fromDetails,
  });
}

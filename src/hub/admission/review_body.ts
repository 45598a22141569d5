// Reading one admission request body from a stranger: a size cap, a deadline, and the port's shared byte budget.

import { type Clock, concatBytes, SystemClock } from "../../util/mod.ts";
import { MAX_REVIEW_BYTES, ReviewInputError } from "./admission_review.ts";
import type { BodyBudget } from "./body_budget.ts";

/** The limits one body is read within. */
export interface ReviewBodyLimits {
  /** The largest body read. Default MAX_REVIEW_BYTES (4 MiB). */
  maxBytes?: number;
  /** The whole body must arrive within this of the request's head. Default 10 s. */
  timeoutMs?: number;
  /** The port's budget, shared by every body being read; absent: only `maxBytes` bounds this one. */
  budget?: BodyBudget;
  clock?: Clock;
}

/**
 * Reads a request body within `limits`, or throws ReviewInputError with the status to answer:
 * - 413 as soon as it goes past `maxBytes` (or its Content-Length says it will), without reading the rest;
 * - 408 when it has not all arrived `timeoutMs` after the call (a real apiserver sends it at once; a stranger
 *   trickling bytes holds the connection and its bytes no longer than this, as Go's http.Server ReadTimeout);
 * - 429 when the port's budget has no room for its bytes (budget: body_budget.ts).
 *
 * Guarantees: the body's bytes go back to the budget when this settles, whatever happens; on a refusal (or the
 * client gone) the stream is cancelled, so nothing more is read. The caller holds the one copy returned and parses
 * it at once.
 */
export async function readReviewBody(req: Request, limits: ReviewBodyLimits = {}): Promise<Uint8Array> {
  const max = limits.maxBytes ?? MAX_REVIEW_BYTES;
  const timeoutMs = limits.timeoutMs ?? 10_000;
  const declared = Number(req.headers.get("content-length") ?? NaN);
  if (declared > max) throw new ReviewInputError(413, `request body of ${declared} bytes exceeds ${max}`);
  if (!req.body) return new Uint8Array(0);
  const lease = limits.budget?.open();
  const reader = req.body.getReader();
  let timedOut!: () => void;
  const deadline = new Promise<"timeout">((resolve) => timedOut = () => resolve("timeout"));
  const timer = (limits.clock ?? new SystemClock()).setTimer(timeoutMs, timedOut);
  const chunks: Uint8Array[] = [];
  let size = 0;
  let refusal: ReviewInputError | undefined;
  let done = false;
  try {
    for (;;) {
      const next = await Promise.race([reader.read(), deadline]);
      if (next === "timeout") {
        refusal = new ReviewInputError(408, `request body not received within ${timeoutMs} ms (${size} bytes came)`);
        break;
      }
      if (next.done) {
        done = true;
        break;
      }
      size += next.value.length;
      if (size > max) {
        refusal = new ReviewInputError(413, `request body exceeds ${max} bytes`);
        break;
      }
      if (lease && !lease.take(next.value.length)) {
        refusal = new ReviewInputError(429, "too many request body bytes in flight on the admission port; retry");
        break;
      }
      chunks.push(next.value);
    }
  } finally {
    timer.cancel();
    lease?.release();
    // Refused (or the client went away): cancelling through the reader ends a read still pending and drops the rest.
    if (!done) await reader.cancel().catch(() => {});
    reader.releaseLock();
  }
  if (refusal) throw refusal;
  return concatBytes(chunks);
}

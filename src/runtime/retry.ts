// Conflict retries in one helper, as client-go's util/retry: re-read, decide again, write again.

import { isConflict } from "../kube/mod.ts";

/**
 * How often `retryOnConflict` tries. client-go's DefaultRetry makes 5 attempts; 3 suffice when every attempt re-reads.
 *
 * @example
 * ```ts
 * import { type ResourceClient, retryOnConflict, type RetryOptions } from "../../sdk.ts";
 * declare const client: ResourceClient;
 * const options: RetryOptions = { attempts: 5 };
 * const ref = { namespace: "web", name: "hello" };
 * await retryOnConflict(async (attempt) => {
 *   const obj = (attempt === 0 ? client.cached(ref) : undefined) ?? await client.get(ref);
 *   await client.patchStatus(obj, { phase: "Ready" });
 * }, options);
 * ```
 */
export interface RetryOptions {
  /** Attempts in all, at least 1. Default 3. */
  attempts?: number;
}

/**
 * Runs `fn(attempt)` until it does not throw a 409 Conflict, at most `attempts` times; `attempt` is 0
 * first, so `fn` can use the cached object then and read it fresh from the API on later attempts.
 * Any other error is thrown at once; the last conflict is thrown once the attempts are used up (the
 * controller then retries the request with backoff).
 *
 * @example
 * ```ts
 * import { retryOnConflict } from "./retry.ts";
 * let calls = 0;
 * await retryOnConflict(async () => {
 *   if (++calls < 2) throw Object.assign(new Error("409"), { status: 409 });
 * });
 * console.log(calls); // 2
 * ```
 */
export async function retryOnConflict<T>(fn: (attempt: number) => Promise<T>, options: RetryOptions = {}): Promise<T> {
  const attempts = Math.max(1, options.attempts ?? 3);
  for (let attempt = 0;; attempt++) {
    try {
      return await fn(attempt);
    } catch (err) {
      if (!isConflict(err) || attempt + 1 >= attempts) throw err;
    }
  }
}

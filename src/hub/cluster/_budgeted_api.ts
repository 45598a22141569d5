// A cluster's API client that spends a token of the cluster's budget before every request.

import type { TokenBucket } from "../../queue/mod.ts";
import type { ApiClient } from "../../runtime/mod.ts";

/**
 * Wraps a client so every request first spends a token from the cluster's budget.
 *
 * Guarantees: a request is handed to `client` only once its token is granted, or once its signal aborted while it
 * waited (the client then fails it).
 */
export function budgeted(client: ApiClient, budget: TokenBucket): ApiClient {
  return {
    async request<T>(method: string, path: string, options: Parameters<ApiClient["request"]>[2] = {}): Promise<T> {
      await budget.wait(options.signal);
      return client.request<T>(method, path, options);
    },
  };
}

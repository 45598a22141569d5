// The path and query string of one API request (the transport prepends the server's base URL).

/**
 * One query parameter's value; undefined leaves the parameter out.
 *
 * @example
 * ```ts
 * import { type KubeClient, type QueryValue, resourcePath } from "../../../kube.ts";
 *
 * declare const client: KubeClient;
 * declare const dryRun: boolean;
 * // `dryRun` is left out of the URL when undefined.
 * const query: Record<string, QueryValue> = { fieldManager: "my-tool", dryRun: dryRun ? "All" : undefined };
 * const site = resourcePath({ group: "", version: "v1", plural: "configmaps", namespace: "shop", name: "site" });
 * await client.request("PATCH", site, { query, body: { data: { greeting: "hello" } } });
 * ```
 */
export type QueryValue = string | number | boolean | undefined;

/**
 * `path` with a leading slash and `query` appended in insertion order, skipping undefined values; a `path` that already
 * carries a query string is continued with `&`.
 */
export function requestTarget(path: string, query?: Record<string, QueryValue>): string {
  let url = path.startsWith("/") ? path : `/${path}`;
  if (query) {
    const params = new URLSearchParams();
    for (const [k, v] of Object.entries(query)) {
      if (v !== undefined) params.set(k, String(v));
    }
    const qs = params.toString();
    if (qs) url += (url.includes("?") ? "&" : "?") + qs;
  }
  return url;
}

// What a handler returned, as the status fields to merge: a returned Kubernetes object is refused, never merged.

import { PermanentError } from "./handler_definition.ts";

/**
 * The status fields a handler returned (undefined for nothing).
 *
 * Guarantees: a returned Kubernetes object (one with `apiVersion`, `kind` and `metadata`, such as the result of
 * `clientFor(X).patch(...)`) is never merged into the parent's status; it is a PermanentError naming the handler,
 * the object seen and what to return instead.
 */
export function returnedStatus(result: unknown, handler: string): Record<string, unknown> | undefined {
  if (result === undefined || result === null) return undefined;
  if (typeof result !== "object" || Array.isArray(result)) {
    throw new PermanentError(
      `handler ${handler} returned ${Array.isArray(result) ? "an array" : typeof result}: ` +
        "return a plain object of status fields, or nothing",
    );
  }
  const r = result as Record<string, unknown>;
  if (typeof r.apiVersion === "string" && typeof r.kind === "string" && typeof r.metadata === "object") {
    const meta = (r.metadata ?? {}) as { name?: unknown; namespace?: unknown };
    const name = [meta.namespace, meta.name].filter((p) => typeof p === "string").join("/");
    throw new PermanentError(
      `handler ${handler} returned a Kubernetes object (${r.apiVersion} ${r.kind} ${name || "(unnamed)"}), ` +
        "which would be merged into the parent's status: return a plain object of status fields " +
        "(e.g. `return { quota: created.metadata.name }`), or nothing (`await c.clientFor(X).patch(...);` " +
        "without `return`)",
    );
  }
  return r;
}

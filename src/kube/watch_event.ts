// One event of a watch stream, and the check that a decoded line is one.

import { NdjsonError } from "./wire/_ndjson.ts";

/**
 * The kinds of watch event the API server sends.
 *
 * @example
 * ```ts
 * import type { KubeClient, WatchEventType } from "../../kube.ts";
 *
 * declare const client: KubeClient;
 * const counts: Record<WatchEventType, number> = { ADDED: 0, MODIFIED: 0, DELETED: 0, BOOKMARK: 0, ERROR: 0 };
 * for await (const event of client.watch("/api/v1/pods", { timeoutSeconds: 60 })) counts[event.type]++;
 * console.log(counts);
 * ```
 */
export type WatchEventType = "ADDED" | "MODIFIED" | "DELETED" | "BOOKMARK" | "ERROR";

/**
 * One line of a watch stream. For ERROR, `object` is a metav1.Status (code 410 means relist).
 *
 * @example
 * ```ts
 * import type { WatchEvent } from "../../kube.ts";
 *
 * type Named = { metadata: { name: string } };
 * function apply(cache: Map<string, Named>, event: WatchEvent<Named>): void {
 *   if (event.type === "ADDED" || event.type === "MODIFIED") cache.set(event.object.metadata.name, event.object);
 *   else if (event.type === "DELETED") cache.delete(event.object.metadata.name);
 *   // BOOKMARK only moves the resourceVersion on; ERROR 410 means list again.
 * }
 * ```
 */
// deno-lint-ignore no-explicit-any
export interface WatchEvent<T = any> {
  /** What happened to `object`. */
  type: WatchEventType;
  /** The object (for BOOKMARK only its resourceVersion; for ERROR a metav1.Status). */
  object: T;
}

const WATCH_TYPES = new Set<string>(["ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR"]);

/** Checks that a decoded NDJSON line is a watch event; throws NdjsonError naming the path otherwise. */
export function toWatchEvent<T>(v: unknown, path: string): WatchEvent<T> {
  if (
    typeof v === "object" && v !== null && typeof (v as WatchEvent).type === "string" &&
    WATCH_TYPES.has((v as WatchEvent).type) && typeof (v as WatchEvent).object === "object"
  ) {
    return v as WatchEvent<T>;
  }
  throw new NdjsonError(`GET ${path}: a line of the watch stream is not a watch event`);
}

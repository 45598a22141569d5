// One event of a watch stream, and the check that a decoded line is one.

import { NdjsonError } from "./_ndjson.ts";

/** The kinds of watch event the API server sends. */
export type WatchEventType = "ADDED" | "MODIFIED" | "DELETED" | "BOOKMARK" | "ERROR";

/** One line of a watch stream. For ERROR, `object` is a metav1.Status (code 410 means relist). */
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

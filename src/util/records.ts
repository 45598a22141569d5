// Narrowing untrusted JSON and YAML values to plain objects: a type guard, and a reader that answers undefined.

/** True for a plain object (not null, not an array): a JSON object as parsed. */
export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** `v` as a plain object, or undefined for anything else (null, an array, a scalar). */
export function record(v: unknown): Record<string, unknown> | undefined {
  return isRecord(v) ? v : undefined;
}

// jsonPatch(): the RFC 6902 JSON Patch that turns one JSON value into another (what a mutating webhook answers).

import type { JsonPatchOperation } from "../runtime/mod.ts";
import { isRecord } from "../util/mod.ts";

/**
 * The operations that turn `from` into `to`, both plain JSON (objects, arrays, strings, numbers, booleans, null).
 *
 * Guarantees:
 * - applying the result to `from` (RFC 6902) gives a value deep-equal to `to`;
 * - equal values give no operation; an object's keys are compared one by one (a changed leaf is one `replace`, a
 *   new key one `add`, a key gone one `remove`), so a patch never rewrites fields the handler did not touch;
 * - an array that differs is replaced whole (its elements are not diffed: simple, and always correct, since the
 *   apiserver applies the patch to the very object it sent);
 * - keys are escaped as RFC 6901 says (`~` as `~0`, `/` as `~1`); `undefined` object values count as absent.
 *
 * @example
 * ```ts
 * import { jsonPatch } from "../../sdk.ts";
 *
 * const before = { spec: { replicas: 1, image: "nginx" } };
 * const after = { spec: { replicas: 2, image: "nginx", paused: true } };
 * const ops = jsonPatch(before, after);
 * console.log(ops);
 * // [ { op: "replace", path: "/spec/replicas", value: 2 }, { op: "add", path: "/spec/paused", value: true } ]
 * ```
 */
export function jsonPatch(from: unknown, to: unknown, path = ""): JsonPatchOperation[] {
  if (isRecord(from) && isRecord(to)) {
    const ops: JsonPatchOperation[] = [];
    for (const key of Object.keys(from)) {
      if (from[key] !== undefined && (!(key in to) || to[key] === undefined)) {
        ops.push({ op: "remove", path: `${path}/${escape(key)}` });
      }
    }
    for (const [key, value] of Object.entries(to)) {
      if (value === undefined) continue;
      const at = `${path}/${escape(key)}`;
      if (!(key in from) || from[key] === undefined) ops.push({ op: "add", path: at, value: clone(value) });
      else ops.push(...jsonPatch(from[key], value, at));
    }
    return ops;
  }
  if (equal(from, to)) return [];
  return [{ op: "replace", path, value: clone(to) }];
}

function escape(key: string): string {
  return key.replaceAll("~", "~0").replaceAll("/", "~1");
}

function clone<V>(v: V): V {
  return JSON.parse(JSON.stringify(v));
}

/** Deep equality of JSON values (`undefined` object values count as absent). */
export function equal(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((x, i) => equal(x, b[i]));
  }
  if (!isRecord(a) || !isRecord(b)) return false;
  const keys = (o: Record<string, unknown>) => Object.keys(o).filter((k) => o[k] !== undefined);
  const ka = keys(a);
  return ka.length === keys(b).length && ka.every((k) => k in b && equal(a[k], b[k]));
}

/**
 * Applies `ops` to a copy of `doc` (the subset jsonPatch() emits: add, replace, remove). For tests and for checking
 * a patch before it is sent; throws on a path that does not resolve.
 */
export function applyJsonPatch(doc: unknown, ops: readonly JsonPatchOperation[]): unknown {
  let root = clone(doc);
  for (const op of ops) {
    if (op.path === "") {
      if (op.op === "remove") throw new Error("cannot remove the whole document");
      root = clone(op.value);
      continue;
    }
    const parts = op.path.split("/").slice(1).map((p) => p.replaceAll("~1", "/").replaceAll("~0", "~"));
    const last = parts.pop()!;
    let parent: unknown = root;
    for (const p of parts) {
      parent = Array.isArray(parent) ? parent[Number(p)] : isRecord(parent) ? parent[p] : undefined;
      if (parent === undefined) throw new Error(`JSON Patch path ${op.path} does not resolve`);
    }
    if (Array.isArray(parent)) {
      const i = last === "-" ? parent.length : Number(last);
      if (op.op === "remove") parent.splice(i, 1);
      else if (op.op === "add") parent.splice(i, 0, clone(op.value));
      else parent[i] = clone(op.value);
    } else if (isRecord(parent)) {
      if (op.op === "remove") {
        if (!(last in parent)) throw new Error(`JSON Patch remove of a missing ${op.path}`);
        delete parent[last];
      } else {
        if (op.op === "replace" && !(last in parent)) throw new Error(`JSON Patch replace of a missing ${op.path}`);
        parent[last] = clone(op.value);
      }
    } else throw new Error(`JSON Patch path ${op.path} does not resolve`);
  }
  return root;
}

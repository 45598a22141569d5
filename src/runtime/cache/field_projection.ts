// What an operator declares it reads of each object (`reads`): the projection that keeps only that, and the guard
// that makes reading anything else an error in development.

import { TerminalError } from "../terminal_error.ts";
import { IDENTITY_FIELDS, objectMeta, type Projection, type StoredObject } from "./store.ts";

/** Keys read by the language and by tools (printing, JSON, promises, tests' deep equality), never by an operator. */
const TOOL_KEYS = new Set([
  "toJSON",
  "then",
  "constructor",
  "valueOf",
  "toString",
  "inspect",
  "$$typeof",
  "asymmetricMatch",
]);

/** Each guard view and the object behind it, so the hub's own code reads past the guard (see `unguarded`). */
const TARGETS = new WeakMap<object, object>();

/** For each guard view, how to make a view of an empty object for one of its fields (see `fieldOrEmpty`). */
const EMPTIES = new WeakMap<object, (key: string) => object | undefined>();

/**
 * `obj[key]` when it holds an object, else an empty object: seen through the same guard when `obj` is a guard view
 * and `key` is declared in part, so a read of an undeclared field under an absent `status` still fails in development
 * (what a Kopf-style handler's `status` and `spec` are).
 */
export function fieldOrEmpty(obj: StoredObject, key: string): Record<string, unknown> {
  const v = obj[key];
  if (v !== null && typeof v === "object") return v as Record<string, unknown>;
  return (EMPTIES.get(obj)?.(key) ?? {}) as Record<string, unknown>;
}

/** The object behind a `readGuard` view (the object itself when it is not one): for the hub's own reads of it. */
export function unguarded<T>(obj: T): T {
  return (obj !== null && typeof obj === "object" ? TARGETS.get(obj) ?? obj : obj) as T;
}

/** A declared field tree: `true` keeps the whole value, a map keeps only the fields under it. */
type ReadTree = true | Map<string, ReadTree>;

/**
 * Thrown in development (`checkReads`) when an operator reads a field of a cached object that its `reads` does not
 * declare: the cache never kept it, so in production the read would be a silent `undefined`. A TerminalError: the
 * reconcile is not retried, as no retry can fix the operator's code.
 *
 * @example
 * ```ts
 * import { UndeclaredFieldError } from "../../../sdk.ts";
 * const err = new UndeclaredFieldError("greeting", "Greeting", "spec.size", ["spec.who"]);
 * console.log(err.field, err.message.includes('Add "spec.size" to reads')); // "spec.size" true
 * ```
 */
export class UndeclaredFieldError extends TerminalError {
  /** Always "UndeclaredFieldError". */
  override name = "UndeclaredFieldError";
  /** The field read, as a dotted path (`spec.replicas`). */
  readonly field: string;

  /** `operator` read field `field` of a `kind` object, and declared only `reads`. */
  constructor(operator: string, kind: string, field: string, reads: readonly string[]) {
    super(
      `operator ${operator} read ${kind} field ${field}, which its reads does not declare ` +
        `(reads: ${reads.length ? reads.join(", ") : "none"}; the metadata identity is always kept): ` +
        `the cache does not keep it, so it would be undefined. Add "${field}" to reads`,
    );
    this.field = field;
  }
}

/**
 * Checks field paths for `reads`: dotted, non-empty segments, no duplicates, nothing under `metadata.managedFields`.
 * Returns an error message naming the first bad path, or undefined.
 */
export function readsProblem(reads: unknown): string | undefined {
  if (!Array.isArray(reads)) return `reads must be an array of field paths, got ${typeof reads}`;
  const seen = new Set<string>();
  for (const path of reads) {
    if (typeof path !== "string" || path === "") return `reads: every field path must be a non-empty string`;
    const parts = path.split(".");
    if (parts.some((p) => p === "" || p === "*")) {
      return `reads: "${path}" is not a field path (dotted field names, e.g. "spec.replicas"; no wildcards)`;
    }
    if (parts[0] === "metadata" && parts[1] === "managedFields") {
      return `reads: "${path}" is never kept (managedFields are dropped before any projection)`;
    }
    if (parts.length === 1 && parts[0] === "metadata") {
      return `reads: "metadata" as a whole is not kept; name the fields (e.g. "metadata.labels")`;
    }
    if (seen.has(path)) return `reads: "${path}" is listed twice`;
    seen.add(path);
  }
  return undefined;
}

/** The tree of `reads` (a path under one already declared whole adds nothing), identity metadata included. */
function readTree(reads: readonly string[]): Map<string, ReadTree> {
  const root = new Map<string, ReadTree>([["metadata", new Map(IDENTITY_FIELDS.map((f) => [f, true]))]]);
  for (const path of reads) {
    let node: Map<string, ReadTree> = root;
    const parts = path.split(".");
    for (let i = 0; i < parts.length; i++) {
      const last = i === parts.length - 1;
      const held = node.get(parts[i]);
      if (held === true) break;
      if (last) {
        node.set(parts[i], true);
        break;
      }
      const next: Map<string, ReadTree> = held ?? new Map();
      node.set(parts[i], next);
      node = next;
    }
  }
  return root;
}

/**
 * A declared field as the projection copies it: a leaf kept whole, remembering the last string it kept, or the declared
 * fields under it.
 */
type CopyTree = Leaf | Map<string, CopyTree>;

interface Leaf {
  last: string | undefined;
}

/** Strings longer than this are kept as they come: a repeat is unlikely, and the leaf would hold the last one alive. */
const SHARED_STRING_MAX = 256;

function copyTree(tree: ReadTree): CopyTree {
  return tree === true ? { last: undefined } : new Map([...tree].map(([k, sub]) => [k, copyTree(sub)]));
}

/**
 * The value of `raw` under the declared `tree`: whole where declared whole, else only the declared fields. A string
 * leaf equal to the last one kept there is replaced by that one, so a value most objects share (a state, a message)
 * is held once, not once per object.
 */
function pick(raw: unknown, tree: CopyTree): unknown {
  if (!(tree instanceof Map)) {
    if (typeof raw === "string" && raw.length <= SHARED_STRING_MAX) {
      if (raw === tree.last) return tree.last;
      tree.last = raw;
    }
    return raw;
  }
  if (raw === null || typeof raw !== "object" || Array.isArray(raw)) return undefined;
  const src = raw as Record<string, unknown>;
  let out: Record<string, unknown> | undefined;
  for (const [key, sub] of tree) {
    const v = pick(src[key], sub);
    if (v !== undefined) (out ??= {})[key] = v;
  }
  return out;
}

/**
 * The projection that keeps the metadata identity (see IDENTITY_FIELDS) plus exactly the fields `reads` declares, in
 * the manner of client-go's `SetTransform`: `["status"]` keeps the whole status, `["spec.replicas",
 * "metadata.labels"]` the spec's replicas and the labels. A declared field the object lacks is simply absent. Paths go
 * through objects only: declare an array (`spec.containers`) whole.
 *
 * Guarantees: the result shares no object with `raw` except values kept whole; nothing undeclared is kept. A string
 * kept whole may be an equal string from an earlier object (the same value: strings are compared by value).
 *
 * @example
 * ```ts
 * import { fieldProjection } from "../../../sdk.ts";
 * const project = fieldProjection(["status.uuid", "metadata.labels"]);
 * const kept = project({
 *   metadata: { name: "a", namespace: "web", resourceVersion: "7", labels: { app: "web" }, managedFields: [] },
 *   spec: { size: 3 },
 *   status: { uuid: "6f1c2a9e-3d4b-4c5a-9e8f-0a1b2c3d4e5f", state: "Ok" },
 * });
 * console.log(kept.spec, kept.status, kept.metadata.labels); // undefined { uuid: "6f1c…" } { app: "web" }
 * ```
 */
export function fieldProjection(reads: readonly string[]): Projection {
  const problem = readsProblem(reads);
  if (problem) throw new TypeError(problem);
  const tree = copyTree(readTree(reads)) as Map<string, CopyTree>;
  const metaTree = tree.get("metadata") as Map<string, CopyTree>;
  const extraMeta = [...metaTree].filter(([k]) => !IDENTITY_FIELDS.includes(k));
  const fields = [...tree].filter(([k]) => k !== "metadata");
  return (raw) => {
    // Built from an empty literal, which has room for four fields in the object itself: one literal with `metadata`
    // only would put every later field in a separate, growing backing store.
    const out = {} as StoredObject;
    out.metadata = objectMeta(raw);
    if (extraMeta.length) {
      const m = (raw.metadata ?? {}) as Record<string, unknown>;
      const meta = out.metadata as unknown as Record<string, unknown>;
      for (const [key, sub] of extraMeta) {
        const v = pick(m[key], sub);
        if (v !== undefined) meta[key] = v;
      }
    }
    for (const [key, sub] of fields) {
      const v = pick(raw[key], sub);
      if (v !== undefined) out[key] = v;
    }
    return out;
  };
}

/**
 * A view of cached objects that throws UndeclaredFieldError when `operator` reads a field its `reads` does not
 * declare (development only: each read goes through a Proxy).
 *
 * Guarantees: reads of declared fields return what the object holds (nested declared objects as views of their own,
 * the same view for the same object); `Object.keys`, spreading and JSON see only the fields the object holds;
 * symbols and the keys tools probe (`toJSON`, `then`, ...) pass through.
 */
export function readGuard(
  operator: string,
  kind: string,
  reads: readonly string[],
): (obj: StoredObject) => StoredObject {
  const tree = readTree(reads);
  const views = new WeakMap<object, object>();
  const view = (target: object, node: Map<string, ReadTree>, at: string): object => {
    const held = views.get(target);
    if (held) return held;
    const proxy = new Proxy(target, {
      get(t, key, receiver) {
        if (typeof key === "symbol" || TOOL_KEYS.has(key)) return Reflect.get(t, key, receiver);
        const sub = node.get(key);
        if (sub === undefined) throw new UndeclaredFieldError(operator, kind, at + key, reads);
        const v = Reflect.get(t, key, receiver);
        return sub === true || v === null || typeof v !== "object" || Array.isArray(v)
          ? v
          : view(v, sub, `${at}${key}.`);
      },
      has(t, key) {
        if (typeof key !== "symbol" && !TOOL_KEYS.has(key) && !node.has(key)) {
          throw new UndeclaredFieldError(operator, kind, at + key, reads);
        }
        return Reflect.has(t, key);
      },
    });
    views.set(target, proxy);
    TARGETS.set(proxy, target);
    EMPTIES.set(proxy, (key) => {
      const sub = node.get(key);
      return sub instanceof Map ? view({}, sub, `${at}${key}.`) : undefined;
    });
    return proxy;
  };
  return (obj) => view(obj, tree, "") as StoredObject;
}

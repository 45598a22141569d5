// Per-cluster cache of the watched objects, trimmed to what reconcilers need.

import type { Request } from "../../queue/mod.ts";

/**
 * The metadata every stored object keeps.
 *
 * @example
 * ```ts
 * import type { ObjectMeta } from "../../../sdk.ts";
 * const meta: ObjectMeta = { name: "hello", namespace: "web", uid: "4f1c", resourceVersion: "812", generation: 3 };
 * const deleting = (m: ObjectMeta): boolean => m.deletionTimestamp !== undefined;
 * console.log(deleting(meta)); // false
 * ```
 */
export interface ObjectMeta {
  /** The object's name. */
  name: string;
  /** Its namespace; absent for cluster-scoped objects. */
  namespace?: string;
  /** Identifies this incarnation of the object. */
  uid?: string;
  /** The version a write must carry to be applied only if nothing changed since. */
  resourceVersion?: string;
  /** Bumped by every change of the spec. */
  generation?: number;
  /** Set once the object is being deleted. */
  deletionTimestamp?: string;
  /** Kept only by projections that ask for them (see `objectMeta`). */
  labels?: Record<string, string>;
  /** Kept only by projections that ask for them (see `objectMeta`). */
  annotations?: Record<string, string>;
}

/**
 * A stored object: metadata plus whatever the operator's projection keeps.
 *
 * @example
 * ```ts
 * import type { StoredObject } from "../../../sdk.ts";
 * const obj: StoredObject = { metadata: { name: "hello", namespace: "web" }, spec: { size: 3 } };
 * const size = (o: StoredObject): number => (o.spec as { size?: number } | undefined)?.size ?? 1;
 * console.log(size(obj)); // 3
 * ```
 */
export interface StoredObject {
  /** Identity and versions. */
  metadata: ObjectMeta;
  /** `spec`, `status`, or whatever else the projection keeps. */
  [field: string]: unknown;
}

/**
 * Turns a raw API object into what the store keeps.
 *
 * @example
 * ```ts
 * import { defineOperator, kinds, type Projection, trimObject } from "../../../sdk.ts";
 * // The cache keeps each ConfigMap's data beside what trimObject keeps.
 * const withData: Projection = (raw) => ({ ...trimObject(raw), data: raw.data });
 * const watcher = defineOperator({
 *   name: "config-watcher",
 *   resource: kinds.ConfigMap,
 *   project: withData,
 *   async reconcile() {},
 * });
 * console.log(watcher.project === withData); // true
 * ```
 */
export type Projection = (raw: Record<string, unknown>) => StoredObject;

/**
 * The default projection: metadata trimmed to identity and versioning fields, plus `spec` and
 * `status` as they are. managedFields, annotations and labels are dropped.
 *
 * @example
 * ```ts
 * import { trimObject } from "../../../sdk.ts";
 * const stored = trimObject({
 *   apiVersion: "v1",
 *   kind: "ConfigMap",
 *   metadata: { name: "settings", namespace: "web", labels: { app: "web" }, managedFields: [{ manager: "kubectl" }] },
 *   data: { mode: "fast" },
 * });
 * console.log(stored.metadata.name, stored.metadata.labels, stored.data); // "settings" undefined undefined
 * ```
 */
export function trimObject(raw: Record<string, unknown>): StoredObject {
  // An empty literal has room for four fields in the object itself (see fieldProjection).
  const out = {} as StoredObject;
  out.metadata = objectMeta(raw);
  if (raw.spec !== undefined) out.spec = raw.spec;
  if (raw.status !== undefined) out.status = raw.status;
  return out;
}

/**
 * The metadata fields `objectMeta` keeps of every object (what writes, events and ownership need): what a `reads`
 * projection keeps whatever it declares, and what its read guard always lets through.
 */
export const IDENTITY_FIELDS: readonly string[] = [
  "name",
  "namespace",
  "uid",
  "resourceVersion",
  "generation",
  "deletionTimestamp",
];

/**
 * The metadata every projection keeps: name, namespace, uid, resourceVersion, generation and deletionTimestamp;
 * with `labels: true`, the labels and annotations too (for projections that select or compare on them). The one
 * place a raw object's metadata is trimmed: managedFields, ownerReferences and the rest are dropped.
 */
export function objectMeta(raw: Record<string, unknown>, options: { labels?: boolean } = {}): ObjectMeta {
  const m = (raw.metadata ?? {}) as Record<string, unknown>;
  const metadata: ObjectMeta = {
    name: String(m.name ?? ""),
    namespace: m.namespace as string | undefined,
    uid: m.uid as string | undefined,
    resourceVersion: m.resourceVersion as string | undefined,
    generation: m.generation as number | undefined,
  };
  if (m.deletionTimestamp) metadata.deletionTimestamp = String(m.deletionTimestamp);
  if (options.labels) {
    metadata.labels = m.labels as Record<string, string> | undefined;
    metadata.annotations = m.annotations as Record<string, string> | undefined;
  }
  return metadata;
}

/** The annotation kubectl apply keeps the whole applied object in (a Secret's data, for a kubectl-applied Secret). */
export const LAST_APPLIED_ANNOTATION = "kubectl.kubernetes.io/last-applied-configuration";

/**
 * The transform every object goes through before any projection sees it, like controller-runtime's
 * DefaultTransform: `metadata.managedFields` and the LAST_APPLIED_ANNOTATION are dropped.
 *
 * Guarantees: `raw` is not modified (a shallow copy is returned when something was dropped, `raw` itself otherwise);
 * nothing else changes, so a change is still recognised by resourceVersion.
 */
export function pruneObject(raw: Record<string, unknown>): Record<string, unknown> {
  const m = raw.metadata as Record<string, unknown> | undefined;
  if (!m || typeof m !== "object") return raw;
  const annotations = m.annotations as Record<string, string> | undefined;
  const lastApplied = !!annotations && typeof annotations === "object" && LAST_APPLIED_ANNOTATION in annotations;
  if (!("managedFields" in m) && !lastApplied) return raw;
  const { managedFields: _dropped, ...metadata } = m;
  if (lastApplied) {
    const { [LAST_APPLIED_ANNOTATION]: _applied, ...rest } = annotations!;
    metadata.annotations = rest;
  }
  return { ...raw, metadata };
}

/** `namespace/name`, or `name` for cluster-scoped objects. */
export function objectKey(meta: { namespace?: string; name: string }): string {
  return meta.namespace ? `${meta.namespace}/${meta.name}` : meta.name;
}

/**
 * The request for the object under store key `key` in `cluster`: the inverse of `objectKey` (namespace "" for a
 * cluster-scoped object). The one place a store key is read back: what the cache reports changed leaves it as a Request.
 */
export function requestOf(cluster: string, key: string): Request {
  const slash = key.indexOf("/");
  return slash < 0
    ? { cluster, namespace: "", name: key }
    : { cluster, namespace: key.slice(0, slash), name: key.slice(slash + 1) };
}

/**
 * True when resourceVersion `a` is certainly newer than `b`: both are decimal integers (etcd revisions, which every
 * apiserver backed by etcd hands out, comparable since Kubernetes' "comparable resource version" KEP-5504) and `a` is
 * larger. False whenever either is missing or not a decimal integer, so an opaque version is never judged older.
 */
export function newerVersion(a: string | undefined, b: string | undefined): boolean {
  if (!a || !b || !DECIMAL.test(a) || !DECIMAL.test(b)) return false;
  return a.length !== b.length ? a.length > b.length : a > b;
}

const DECIMAL = /^[1-9][0-9]*$/;

/** The bucket of an object with metadata.namespace `namespace`: "" where objectKey sees no namespace, else its text. */
function bucketName(namespace: unknown): string {
  return namespace ? String(namespace) : "";
}

/** One namespace's objects by name; `namespace` is the one copy of its name every object in it shares. */
interface Bucket {
  readonly namespace: string;
  readonly objects: Map<string, StoredObject>;
}

/**
 * A map of `namespace/name` to trimmed objects for one cluster.
 *
 * Guarantees: every object passes through `pruneObject` before the projection, so no cached object keeps
 * managedFields or kubectl's last-applied configuration, whatever the projection keeps; `replace` returns exactly the keys that were added, changed (by resourceVersion)
 * or removed, so a relist after a watch gap yields the right adds and deletes; an object the cache took from a
 * write's own answer (`takeWritten`) is never replaced by an older version of it (a watch event or list item that was
 * on its way), so the next reconcile reads what was written, not the state before it.
 *
 * What it holds per object: the projection's output, and one map entry keyed by the object's own name string. The
 * objects of a namespace share one copy of its name (their `metadata.namespace`), and no `namespace/name` string is
 * kept: keys are built when asked for (`keys`, and what the writes return).
 */
export class Store {
  /** Buckets by namespace ("" for cluster-scoped objects); a bucket is removed with its last object. */
  readonly #buckets = new Map<string, Bucket>();
  #size = 0;
  readonly #project: Projection;
  readonly #projection: Projection;

  constructor(project: Projection = trimObject) {
    this.#project = (raw) => project(pruneObject(raw));
    this.#projection = project;
  }

  get size(): number {
    return this.#size;
  }

  /** What this store keeps of each object; operators with the same projection can share the store. */
  get projection(): Projection {
    return this.#projection;
  }

  /** The object under `key` (`namespace/name`, or `name` when cluster-scoped). */
  get(key: string): StoredObject | undefined {
    const slash = key.indexOf("/");
    return slash < 0 ? this.#held("", key) : this.#held(key.slice(0, slash), key.slice(slash + 1));
  }

  /** The object `ref` names (namespace "" or absent for cluster-scoped), without building its key. */
  getRef(ref: { namespace?: string; name: string }): StoredObject | undefined {
    return this.#held(bucketName(ref.namespace), ref.name);
  }

  /** Every key held, built as it is reached. */
  *keys(): IterableIterator<string> {
    for (const [namespace, bucket] of this.#buckets) {
      for (const name of bucket.objects.keys()) yield namespace ? `${namespace}/${name}` : name;
    }
  }

  /** Stores the object (unless the cache holds a newer version of it, see `takeWritten`); returns its key. */
  upsert(raw: Record<string, unknown>): string {
    const obj = this.#project(raw);
    if (!newerVersion(this.getRef(obj.metadata)?.metadata.resourceVersion, obj.metadata.resourceVersion)) {
      this.#put(obj);
    }
    return objectKey(obj.metadata);
  }

  /**
   * Takes the object a write of it answered with (a patch, a status patch, an apply), so the next reconcile reads what
   * was written before its watch event arrives. Only an object the cache holds, in an older version, is replaced:
   * an object the watch already removed (deleted meanwhile) is not brought back, nor a newer one overwritten.
   * Returns true when it was taken. Listeners are told by the write's own watch event, as for any other change.
   */
  takeWritten(raw: Record<string, unknown>): boolean {
    const obj = this.#project(raw);
    const held = this.getRef(obj.metadata);
    if (!held || !newerVersion(obj.metadata.resourceVersion, held.metadata.resourceVersion)) return false;
    this.#put(obj);
    return true;
  }

  /** Removes the object; returns its key. */
  delete(raw: Record<string, unknown>): string {
    const m = (raw.metadata ?? {}) as { namespace?: string; name?: string };
    const ref = { namespace: m.namespace, name: String(m.name ?? "") };
    this.#remove(bucketName(ref.namespace), ref.name);
    return objectKey(ref);
  }

  /** Replaces the whole content with a fresh list; returns the keys that changed. */
  replace(rawItems: Iterable<Record<string, unknown>>): string[] {
    const relist = this.startRelist();
    for (const raw of rawItems) relist.add(raw);
    return relist.finish();
  }

  /**
   * Starts a relist that is fed page by page, so a large list never sits in memory twice.
   * Objects are visible as soon as they are added; `finish` removes what the list did not hold
   * (only within `namespace` when the list was scoped to one).
   */
  startRelist(namespace?: string): { add(raw: Record<string, unknown>): void; finish(): string[] } {
    const changed: string[] = [];
    /** The names the list held, by namespace (the names are the stored objects' own strings). */
    const seen = new Map<string, Set<string>>();
    return {
      add: (raw) => {
        const obj = this.#project(raw);
        const ns = bucketName(obj.metadata.namespace);
        let names = seen.get(ns);
        if (!names) seen.set(ns, names = new Set());
        names.add(obj.metadata.name);
        const old = this.getRef(obj.metadata);
        // A list served a little behind a write this hub made keeps the written version.
        if (newerVersion(old?.metadata.resourceVersion, obj.metadata.resourceVersion)) return;
        if (!old || old.metadata.resourceVersion !== obj.metadata.resourceVersion) {
          changed.push(objectKey(obj.metadata));
        }
        this.#put(obj);
      },
      finish: () => {
        for (const [ns, bucket] of this.#buckets) {
          if (namespace && ns !== namespace) continue;
          const names = seen.get(ns);
          for (const name of bucket.objects.keys()) {
            if (names?.has(name)) continue;
            this.#remove(ns, name);
            changed.push(ns ? `${ns}/${name}` : name);
          }
        }
        return changed;
      },
    };
  }

  clear(): void {
    this.#buckets.clear();
    this.#size = 0;
  }

  /**
   * The request for the object under `key` in `cluster` (see requestOf), built of the stored object's own namespace
   * and name strings while it is held, so a queued request costs no strings of its own.
   */
  requestOf(cluster: string, key: string): Request {
    const obj = this.get(key);
    if (!obj) return requestOf(cluster, key);
    return { cluster, namespace: bucketName(obj.metadata.namespace), name: obj.metadata.name };
  }

  #held(namespace: string, name: string): StoredObject | undefined {
    return this.#buckets.get(namespace)?.objects.get(name);
  }

  /** Stores `obj` under its namespace's bucket, sharing the bucket's copy of the namespace name. */
  #put(obj: StoredObject): void {
    const meta = obj.metadata;
    const ns = bucketName(meta.namespace);
    let bucket = this.#buckets.get(ns);
    if (!bucket) this.#buckets.set(ns, bucket = { namespace: ns, objects: new Map() });
    // Strings compare by value, so the shared copy is assigned whether or not this one is already it. Metadata a
    // projection made read-only keeps its own copy.
    if (ns && !Object.isFrozen(meta)) {
      try {
        meta.namespace = bucket.namespace;
      } catch { /* a read-only namespace property */ }
    }
    const before = bucket.objects.size;
    bucket.objects.set(meta.name, obj);
    this.#size += bucket.objects.size - before;
  }

  #remove(namespace: string, name: string): void {
    const bucket = this.#buckets.get(namespace);
    if (!bucket?.objects.delete(name)) return;
    this.#size--;
    if (bucket.objects.size === 0) this.#buckets.delete(namespace);
  }
}

// In-memory indexes over an operator's objects in every engaged cluster (Kopf's `@kopf.index`), for its handlers.

import type { CacheObserver, Request, StoredObject } from "../runtime/mod.ts";
import { OperatorDefinitionError } from "./define_operator.ts";

/**
 * What an index function returns for one object: its entries as `{ key: value }` (several keys allowed), or nothing
 * (`undefined`, `null`, `{}`) to leave the object out of the index.
 *
 * @example
 * ```ts
 * import type { IndexEntries } from "./indexes.ts";
 * const twoKeys: IndexEntries = { "team-1": "web", "tier:frontend": "web" };
 * console.log(Object.keys(twoKeys ?? {})); // ["team-1", "tier:frontend"]
 * ```
 */
export type IndexEntries = Record<string, unknown> | undefined | null | void;

/**
 * An index function: the entries of one cached object of the operator's resource (as the handlers see it: identity,
 * labels, annotations, spec, status), given the cluster it is in. Kopf's `@kopf.index` function.
 *
 * @example Every object's name under its `spec.owner`, across all engaged clusters
 * ```ts
 * import type { IndexFn } from "./indexes.ts";
 * const byOwner: IndexFn = (obj) => {
 *   const owner = (obj.spec as { owner?: string } | undefined)?.owner;
 *   return owner ? { [owner]: obj.metadata.name } : undefined;
 * };
 * console.log(byOwner({ metadata: { name: "a" }, spec: { owner: "team-1" } }, { cluster: "prod" }));
 * ```
 */
export type IndexFn<T extends StoredObject = StoredObject> = (
  object: T,
  context: { cluster: string },
) => IndexEntries;

/**
 * One value of an index, with the object it came from (`index.entries(key)`).
 *
 * @example
 * ```ts
 * import type { IndexEntry } from "./indexes.ts";
 * const e: IndexEntry<string> = { cluster: "prod", namespace: "ns", name: "web", value: "web" };
 * console.log(`${e.cluster}/${e.namespace}/${e.name}`); // "prod/ns/web"
 * ```
 */
export interface IndexEntry<V = unknown> {
  /** The cluster the object is in. */
  cluster: string;
  /** The object's namespace ("" for a cluster-scoped object). */
  namespace: string;
  /** The object's name. */
  name: string;
  /** What the index function returned under the key for this object. */
  value: V;
}

/**
 * A read-only view of one index: for each key, the values every object returned under it, in every cluster engaged
 * in this replica (Kopf's `kopf.Index` of `kopf.Store`s).
 *
 * @example
 * ```ts
 * import { defineHandlers } from "../../mod.ts";
 * export const teams = defineHandlers({
 *   name: "teams",
 *   resource: { group: "examples.operator-hub.dev", version: "v1", kind: "Project", plural: "projects" },
 *   indexes: { byOwner: (p) => ({ [String((p.spec as { owner?: string })?.owner)]: p.metadata.name }) },
 *   create: ({ indexes, spec }) => ({ siblings: indexes.byOwner.get<string>(String(spec.owner)).length }),
 * });
 * ```
 */
export interface Index<V = unknown> {
  /** The values under `key`, from every object and cluster ([] when none). */
  get<U = V>(key: string): U[];
  /** The values under `key` with the object (cluster, namespace, name) each came from. */
  entries<U = V>(key: string): IndexEntry<U>[];
  /** Whether any object has a value under `key`. */
  has(key: string): boolean;
  /** Every key with at least one value. */
  keys(): string[];
  /** The number of keys. */
  readonly size: number;
}

/**
 * The operator's indexes by name, as handlers get them (`ctx.indexes.NAME`).
 *
 * @example
 * ```ts
 * import type { Indexes } from "./indexes.ts";
 * const owned = (indexes: Indexes, owner: string) => indexes.byOwner?.get<string>(owner) ?? [];
 * console.log(owned({}, "team-1")); // []
 * ```
 */
export type Indexes = Readonly<Record<string, Index>>;

/** An object's identity across clusters: cluster and `namespace/name`, joined by a character neither can hold. */
const objectId = ({ cluster, namespace, name }: Request) => `${cluster}\u0000${namespace}/${name}`;

/** One index's content: key → (object id → entry), and what each object put in it. */
class IndexStore implements Index {
  readonly byKey = new Map<string, Map<string, IndexEntry>>();
  readonly byObject = new Map<string, string[]>();

  get<U>(key: string): U[] {
    return [...(this.byKey.get(key)?.values() ?? [])].map((e) => e.value as U);
  }

  entries<U>(key: string): IndexEntry<U>[] {
    return [...(this.byKey.get(key)?.values() ?? [])].map((e) => ({ ...e }) as IndexEntry<U>);
  }

  has(key: string): boolean {
    return this.byKey.has(key);
  }

  keys(): string[] {
    return [...this.byKey.keys()];
  }

  get size(): number {
    return this.byKey.size;
  }

  remove(id: string): void {
    for (const key of this.byObject.get(id) ?? []) {
      const entries = this.byKey.get(key);
      entries?.delete(id);
      if (entries?.size === 0) this.byKey.delete(key);
    }
    this.byObject.delete(id);
  }

  put(id: string, entries: Record<string, unknown>, where: Omit<IndexEntry, "value">): void {
    const keys = Object.keys(entries);
    for (const key of keys) {
      let m = this.byKey.get(key);
      if (!m) this.byKey.set(key, m = new Map());
      m.set(id, { ...where, value: entries[key] });
    }
    if (keys.length) this.byObject.set(id, keys);
  }
}

/**
 * The indexes of one operator, maintained from its caches in every engaged cluster (a CacheObserver the hub calls).
 *
 * Guarantees: after `changed(request, obj)` returns, every index holds exactly what its function returned for
 * `obj` (nothing of the object's earlier version); a gone object (`undefined`) and every object of a forgotten
 * cluster leave every index; an index function that throws leaves the object out of that index and the error is
 * thrown after the other indexes were updated (the hub logs it). Across clusters: the index holds what the caches of
 * this replica hold (with `--shard`, the clusters this replica owns; a cluster still listing, what it listed so far).
 */
export class ObjectIndexes<T extends StoredObject = StoredObject> implements CacheObserver {
  readonly #fns: [string, IndexFn<T>][];
  readonly #stores = new Map<string, IndexStore>();
  /** Per cluster: the ids of its objects in any index. */
  readonly #clusters = new Map<string, Set<string>>();
  /** The read-only view handlers get. */
  readonly view: Indexes;

  constructor(fns: Record<string, IndexFn<T>> | undefined) {
    this.#fns = Object.entries(fns ?? {});
    const view: Record<string, Index> = {};
    for (const [name, fn] of this.#fns) {
      if (typeof fn !== "function") throw new OperatorDefinitionError(`index ${name}: must be a function`);
      const store = new IndexStore();
      this.#stores.set(name, store);
      view[name] = store;
    }
    this.view = Object.freeze(view);
  }

  /** Whether any index is defined. */
  get defined(): boolean {
    return this.#fns.length > 0;
  }

  changed(request: Request, object: StoredObject | undefined): void {
    const { cluster, namespace, name: objectName } = request;
    const id = objectId(request);
    let failure: unknown;
    let held = false;
    for (const [name, fn] of this.#fns) {
      const store = this.#stores.get(name)!;
      store.remove(id);
      if (!object) continue;
      let entries: IndexEntries;
      try {
        entries = fn(object as T, { cluster });
      } catch (err) {
        const what = `${namespace ? `${namespace}/` : ""}${objectName}`;
        failure ??= new Error(`index ${name} failed on ${what} in cluster ${cluster}: ${(err as Error)?.message}`, {
          cause: err,
        });
        continue;
      }
      if (!entries || typeof entries !== "object") continue;
      store.put(id, entries, { cluster, namespace, name: objectName });
      held ||= store.byObject.has(id);
    }
    let ids = this.#clusters.get(cluster);
    if (held) {
      if (!ids) this.#clusters.set(cluster, ids = new Set());
      ids.add(id);
    } else ids?.delete(id);
    if (failure) throw failure;
  }

  forget(cluster: string): void {
    for (const id of this.#clusters.get(cluster) ?? []) {
      for (const store of this.#stores.values()) store.remove(id);
    }
    this.#clusters.delete(cluster);
  }
}

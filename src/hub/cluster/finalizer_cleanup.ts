// Removes the hub's finalizers from one cluster (uninstall, a cluster leaving the registry), so no namespace hangs.

import { httpStatusOf, type KubeClient, resourcePath, type ResourceType } from "../../kube/mod.ts";
import type { Operator } from "../../runtime/mod.ts";
import { errorText } from "../../util/mod.ts";

/** One resource to clean, and the finalizers of the hub that may sit on its objects. */
export interface CleanupTarget {
  type: ResourceType;
  finalizers: readonly string[];
}

/** What a cleanup did in one cluster. */
export interface CleanupResult {
  cluster: string;
  /** Objects a finalizer was removed from. */
  objects: number;
  /** Finalizers removed, all objects together. */
  finalizers: number;
  /** The first failure, one line; undefined when the cluster was cleaned completely. */
  error?: string;
}

/** Options of {@linkcode removeFinalizers}. */
export interface CleanupOptions {
  /** Only these namespaces (the hub's `--namespace`); default every namespace. */
  namespaces?: readonly string[];
  signal?: AbortSignal;
  /** Attempts per object when someone else changes its finalizers meanwhile. Default 5. */
  attempts?: number;
}

/**
 * Every resource of the hub's operators, each with every finalizer any of them declares plus `also` (e.g. the SDK's
 * handler finalizer, which an earlier hub's handlers may have left on a built-in resource): an object whose resource
 * two operators share may carry the finalizers of both.
 */
export function cleanupTargets(operators: readonly Operator[], also: readonly string[] = []): CleanupTarget[] {
  const names = [...new Set([...also, ...operators.flatMap((op) => op.finalizers ?? [])])].sort();
  const types = new Map<string, ResourceType>();
  for (const op of operators) {
    const t = op.resource;
    types.set(`${t.group}/${t.version}/${t.plural}`, t);
  }
  return [...types.values()].map((type) => ({ type, finalizers: names }));
}

/**
 * Removes `targets`' finalizers from every object of their resources in the cluster `client` reaches.
 *
 * Guarantees:
 * - only the named finalizers go: each removal is a JSON Patch that first `test`s the finalizer is still at the index
 *   read, so another controller's finalizer, added or removed meanwhile, is never clobbered (the object is read again
 *   and retried instead);
 * - a resource the cluster does not serve (its CRD missing) is skipped, not an error; an object deleted meanwhile too;
 * - one object that fails does not stop the others: the first failure is returned in `error`.
 */
export async function removeFinalizers(
  client: KubeClient,
  targets: readonly CleanupTarget[],
  options: CleanupOptions = {},
): Promise<CleanupResult> {
  const result: CleanupResult = { cluster: client.access.name, objects: 0, finalizers: 0 };
  const fail = (err: unknown) => {
    result.error ??= errorText(err);
  };
  const scopes = options.namespaces?.length ? options.namespaces : [undefined];
  for (const target of targets) {
    for (const namespace of scopes) {
      if (options.signal?.aborted) {
        fail(new Error("cleanup interrupted"));
        return result;
      }
      const { group, version, plural } = target.type;
      const collection = resourcePath({ group, version, plural, namespace });
      let continueToken: string | undefined;
      try {
        do {
          const page = await client.listPage<Item>(collection, { limit: 500, continueToken, signal: options.signal });
          for (const item of page.items) {
            if (!hubFinalizers(item, target.finalizers).length) continue;
            try {
              const removed = await cleanOne(client, target, item, options);
              if (removed) {
                result.objects++;
                result.finalizers += removed;
              }
            } catch (err) {
              fail(err);
            }
          }
          continueToken = page.continueToken;
        } while (continueToken);
      } catch (err) {
        if (httpStatusOf(err) === 404) break; // the cluster does not serve this resource: nothing to clean
        fail(err);
      }
    }
  }
  return result;
}

interface Item {
  metadata: { name: string; namespace?: string; finalizers?: string[] };
}

function hubFinalizers(item: Item, names: readonly string[]): number[] {
  const list = item.metadata.finalizers ?? [];
  return list.flatMap((f, i) => names.includes(f) ? [i] : []);
}

/** Removes the hub's finalizers from one object; the number removed (0 when it was gone or had none left). */
async function cleanOne(client: KubeClient, target: CleanupTarget, first: Item, options: CleanupOptions) {
  const { group, version, plural } = target.type;
  const path = resourcePath({ group, version, plural, namespace: first.metadata.namespace, name: first.metadata.name });
  let item = first;
  const attempts = options.attempts ?? 5;
  for (let attempt = 1;; attempt++) {
    const indices = hubFinalizers(item, target.finalizers);
    if (!indices.length) return 0;
    // Highest index first, so each remove leaves the indices still to come where they were read.
    const patch = indices.reverse().flatMap((i) => [
      { op: "test", path: `/metadata/finalizers/${i}`, value: item.metadata.finalizers![i] },
      { op: "remove", path: `/metadata/finalizers/${i}` },
    ]);
    try {
      await client.request("PATCH", path, {
        body: patch,
        contentType: "application/json-patch+json",
        signal: options.signal,
      });
      return indices.length;
    } catch (err) {
      const status = httpStatusOf(err);
      if (status === 404) return 0;
      // 422: a `test` failed (the finalizers changed since they were read); 409: a conflicting write.
      if ((status !== 422 && status !== 409) || attempt >= attempts) {
        throw new FinalizerCleanupError(
          `could not remove the hub's finalizers from ${plural} ${objectName(item)}: ${errorText(err)}`,
          { cause: err },
        );
      }
      try {
        item = await client.request<Item>("GET", path, { signal: options.signal });
      } catch (again) {
        if (httpStatusOf(again) === 404) return 0;
        throw again;
      }
    }
  }
}

function objectName(item: Item): string {
  return item.metadata.namespace ? `${item.metadata.namespace}/${item.metadata.name}` : item.metadata.name;
}

/** A finalizer could not be removed from one object. */
export class FinalizerCleanupError extends Error {
  override name = "FinalizerCleanupError";
}

/** `prod: removed 3 finalizers from 3 objects`, with the failure appended when there was one. */
export function cleanupLine(r: CleanupResult): string {
  const done = `${r.cluster}: removed ${r.finalizers} finalizer${r.finalizers === 1 ? "" : "s"} from ${r.objects} ` +
    `object${r.objects === 1 ? "" : "s"}`;
  return r.error ? `${done}; failed: ${r.error}` : done;
}

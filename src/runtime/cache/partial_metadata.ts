// Metadata-only watches (client-go's metadata informers, kube-rs's metadata_watcher): objects as PartialObjectMetadata.

import type { WatchEvent } from "../../kube/mod.ts";
import { type ConnectionHooks, connectionHooks, type ListWatchClient } from "./watcher.ts";
import { type ObjectMeta, objectMeta, type Projection, type StoredObject } from "./store.ts";

/**
 * An object read as metadata only, as the apiserver answers a metadata-only list or watch (`meta.k8s.io/v1`
 * PartialObjectMetadata): no `spec`, `status`, `data` or any other field but `metadata`.
 *
 * @example
 * ```ts
 * import type { PartialObjectMetadata } from "./partial_metadata.ts";
 * const seen: PartialObjectMetadata = {
 *   apiVersion: "meta.k8s.io/v1",
 *   kind: "PartialObjectMetadata",
 *   metadata: { name: "settings", namespace: "web", resourceVersion: "812", labels: { app: "web" } },
 * };
 * ```
 */
export interface PartialObjectMetadata extends StoredObject {
  /** Always `meta.k8s.io/v1`. */
  apiVersion: "meta.k8s.io/v1";
  /** Always `PartialObjectMetadata`. */
  kind: "PartialObjectMetadata";
  /** What the cache keeps of the object's metadata (see {@link partialObjectMetadata}). */
  metadata: PartialMeta;
}

/**
 * An owner reference, as Kubernetes stores it (what `adopt` writes, what a PartialMeta keeps).
 *
 * @example
 * ```ts
 * import type { OwnerReference } from "../../../sdk.ts";
 * const ref: OwnerReference = { apiVersion: "apps/v1", kind: "Deployment", name: "web", uid: "5f1…", controller: true };
 * ```
 */
export interface OwnerReference {
  /** The owner's `apiVersion`. */
  apiVersion: string;
  /** The owner's kind. */
  kind: string;
  /** The owner's name. */
  name: string;
  /** The owner's uid. */
  uid: string;
  /** True for the one managing controller. */
  controller?: boolean;
  /** True when a foreground deletion of the owner waits for this object. */
  blockOwnerDeletion?: boolean;
}

/**
 * The metadata a PartialObjectMetadata keeps: ObjectMeta with labels and annotations, and these four.
 *
 * @example
 * ```ts
 * import type { PartialMeta } from "../../../sdk.ts";
 * const ownedBy = (meta: PartialMeta, uid: string): boolean =>
 *   meta.ownerReferences?.some((o) => o.uid === uid) ?? false;
 * const meta: PartialMeta = {
 *   name: "site-html",
 *   namespace: "web",
 *   ownerReferences: [{ apiVersion: "examples.operator-hub.dev/v1", kind: "Website", name: "site", uid: "4f1c" }],
 * };
 * console.log(ownedBy(meta, "4f1c")); // true
 * ```
 */
export interface PartialMeta extends ObjectMeta {
  /** The object's owners, as Kubernetes stores them. */
  ownerReferences?: OwnerReference[];
  /** Its finalizers. */
  finalizers?: string[];
  /** When it was created (RFC 3339). */
  creationTimestamp?: string;
  /** The prefix its name was generated from. */
  generateName?: string;
}

/**
 * The projection of a metadata-only watch: any object, a PartialObjectMetadata or a full one (a server that does not
 * serve PartialObjectMetadata answers the full object), reduced to a PartialObjectMetadata.
 *
 * Guarantees: only the metadata fields of {@link PartialMeta} are kept (identity, versions, labels, annotations,
 * owner references, finalizers, creation time, generateName): never any other field of the object, so a full
 * ConfigMap or Secret answered by an older server leaves no `data` in the cache. The Store prunes managedFields and
 * kubectl's last-applied configuration before this runs.
 */
export function partialObjectMetadata(raw: Record<string, unknown>): PartialObjectMetadata {
  const m = (raw.metadata ?? {}) as Record<string, unknown>;
  const metadata: PartialMeta = objectMeta(raw, { labels: true });
  if (metadata.labels === undefined) delete metadata.labels;
  if (metadata.annotations === undefined) delete metadata.annotations;
  if (Array.isArray(m.ownerReferences)) metadata.ownerReferences = m.ownerReferences as PartialMeta["ownerReferences"];
  if (Array.isArray(m.finalizers)) metadata.finalizers = m.finalizers as string[];
  if (typeof m.creationTimestamp === "string") metadata.creationTimestamp = m.creationTimestamp;
  if (typeof m.generateName === "string") metadata.generateName = m.generateName;
  return { apiVersion: "meta.k8s.io/v1", kind: "PartialObjectMetadata", metadata };
}

/**
 * The store projection of a metadata-only watch: `project` (default none) applied to the PartialObjectMetadata, so
 * whatever `project` keeps, it never sees more than the metadata.
 */
export function metadataProjection(project?: (object: PartialObjectMetadata) => StoredObject): Projection {
  return project ? (raw) => project(partialObjectMetadata(raw)) : partialObjectMetadata;
}

/** A client whose list and watch can ask for metadata only (the kube layer's KubeClient fits). */
export interface MetadataListWatchClient extends ConnectionHooks {
  listPage(
    path: string,
    options: { limit?: number; continueToken?: string; signal?: AbortSignal; metadataOnly?: boolean },
  ): ReturnType<ListWatchClient["listPage"]>;
  watch(
    path: string,
    options: Parameters<ListWatchClient["watch"]>[1] & { metadataOnly?: boolean },
  ): AsyncIterable<WatchEvent>;
}

/**
 * `client` with every list and watch asking for PartialObjectMetadata (the Accept headers of client-go's metadata
 * client), so no object's other fields cross the wire or are parsed. Pair it with {@link metadataProjection}: a
 * server that ignores the Accept header answers full objects, which the projection reduces.
 */
export function metadataOnlyClient(client: MetadataListWatchClient): ListWatchClient {
  return {
    listPage: (path, options) => client.listPage(path, { ...options, metadataOnly: true }),
    watch: (path, options) => client.watch(path, { ...options, metadataOnly: true }),
    ...connectionHooks(client),
  };
}

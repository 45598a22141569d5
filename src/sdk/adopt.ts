// Children: adopt() marks an object as a parent's (owner reference, namespace, labels), owns turns that into requeues.

import { apiVersionOf, qualifiedName, type ResourceType } from "../kube/mod.ts";
import {
  type NewObject,
  objectMeta,
  type OwnerReference,
  type Request,
  type StoredObject,
  TerminalError,
  type Verb,
  type WatchedResource,
} from "../runtime/mod.ts";
import { kindOf } from "./kinds.ts";

/**
 * The label naming the parent's resource (`plural.group`): what an `owns` watch selects on.
 *
 * @example
 * ```ts
 * import { PARENT_RESOURCE_LABEL } from "./adopt.ts";
 * // kubectl get deployments -l operator-hub.dev/parent-resource=websites.examples.operator-hub.dev
 * console.log(`${PARENT_RESOURCE_LABEL}=websites.examples.operator-hub.dev`);
 * ```
 */
export const PARENT_RESOURCE_LABEL = "operator-hub.dev/parent-resource";
/**
 * The label naming the parent (its name, or a hash of a name that is no valid label value).
 *
 * @example
 * ```ts
 * import { PARENT_NAME_LABEL } from "./adopt.ts";
 * // kubectl get all -l operator-hub.dev/parent-name=my-site
 * console.log(`${PARENT_NAME_LABEL}=my-site`);
 * ```
 */
export const PARENT_NAME_LABEL = "operator-hub.dev/parent-name";
/**
 * The annotation holding the whole parent, `cluster/namespace/name` (namespace "" when cluster-scoped): how `owns`
 * finds the parent of a child that has no owner reference (in another cluster or namespace).
 *
 * @example
 * ```ts
 * import { PARENT_ANNOTATION } from "./adopt.ts";
 * const child = { metadata: { name: "site", annotations: { [PARENT_ANNOTATION]: "prod/web/site" } } };
 * console.log(child.metadata.annotations[PARENT_ANNOTATION].split("/")); // ["prod", "web", "site"]
 * ```
 */
export const PARENT_ANNOTATION = "operator-hub.dev/parent";

/**
 * The parent an object is adopted by: the object itself, its resource and the cluster it lives in.
 *
 * @example
 * ```ts
 * import type { AdoptParent } from "./adopt.ts";
 * const parent: AdoptParent = {
 *   object: { metadata: { name: "site", namespace: "web", uid: "0b6c…" } },
 *   type: { group: "examples.operator-hub.dev", version: "v1", kind: "Website", plural: "websites" },
 *   cluster: "prod",
 * };
 * ```
 */
export interface AdoptParent {
  /** The parent object (its `metadata.uid` is required). */
  object: StoredObject;
  /** The parent's resource. */
  type: ResourceType;
  /** The engaged cluster the parent lives in. */
  cluster: string;
  /** The operator's `owns`: a child adopted into another cluster must be of a kind it owns `acrossClusters`. */
  owns?: readonly (ResourceType | OwnedResource)[];
}

/**
 * Options of {@link adopt}.
 *
 * @example
 * ```ts
 * import type { AdoptOptions } from "./adopt.ts";
 * import { kinds } from "./kinds.ts";
 * const namespaceInDev: AdoptOptions = { type: kinds.Namespace, cluster: "dev" }; // labelled only: no owner reference
 * ```
 */
export interface AdoptOptions {
  /** The child's resource (e.g. `kinds.Namespace`); default from the child's `kind` in `kinds`, else namespaced. */
  type?: ResourceType;
  /** The engaged cluster the child will live in; default the parent's. */
  cluster?: string;
}

/**
 * Marks `child` as the parent's, as `kopf.adopt` does, and returns it (changed in place):
 * - an owner reference to the parent (`controller: true`, `blockOwnerDeletion: true`, the parent's uid), so the
 *   controller manager's garbage collector deletes the child with its parent;
 * - the parent's namespace, when the child has none and both are namespaced;
 * - the labels {@link PARENT_RESOURCE_LABEL} and {@link PARENT_NAME_LABEL}, and the annotation
 *   {@link PARENT_ANNOTATION}, by which `owns` finds the parent of a changed child.
 *
 * Guarantees: no owner reference is set where Kubernetes cannot honour it: a child in another cluster (owner
 * references never cross clusters), in another namespace than its namespaced parent (the garbage collector would
 * look for the parent in the child's namespace and delete the child), or cluster-scoped under a namespaced parent.
 * Such a child is only labelled and annotated: `owns` still requeues its parent, but nothing collects it, so a
 * delete handler must remove it. A child already controlled by another object is refused with a TerminalError.
 *
 * @example
 * ```ts
 * import { adopt } from "./adopt.ts";
 * import { kinds } from "./kinds.ts";
 * const parent = {
 *   object: { metadata: { name: "site", namespace: "web", uid: "0b6c…" } },
 *   type: { group: "examples.operator-hub.dev", version: "v1", kind: "Website", plural: "websites" },
 *   cluster: "prod",
 * };
 * const child = adopt({ metadata: { name: "site" }, data: {} }, parent, { type: kinds.ConfigMap });
 * console.log(child.metadata.namespace); // "web"
 * console.log(child.metadata.labels); // { "operator-hub.dev/parent-resource": "websites.examples.operator-hub.dev", "operator-hub.dev/parent-name": "site" }
 * ```
 */
export function adopt<O extends NewObject>(child: O, parent: AdoptParent, options: AdoptOptions = {}): Adopted<O> {
  const p = parent.object.metadata;
  if (!p.uid) {
    throw new TerminalError(`cannot adopt ${child.metadata.name}: the parent ${p.name} has no uid (not read yet)`);
  }
  const childType = options.type ?? kindOf(child.apiVersion, child.kind);
  const childNamespaced = childType?.namespaced !== false;
  const parentNamespaced = parent.type.namespaced !== false;
  const m = child.metadata as NewObject["metadata"] & {
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    ownerReferences?: OwnerReference[];
  };
  if (childNamespaced && parentNamespaced && !m.namespace && p.namespace) m.namespace = p.namespace;
  const sameCluster = (options.cluster ?? parent.cluster) === parent.cluster;
  if (!sameCluster && childType) refuseSameClusterOnly(parent.owns ?? [], childType, m.name, options.cluster!);
  const scopesAllow = parentNamespaced ? childNamespaced && m.namespace === p.namespace : true;
  if (sameCluster && scopesAllow) {
    const refs = m.ownerReferences ?? [];
    const other = refs.find((r) => r.controller && r.uid !== p.uid);
    if (other) {
      throw new TerminalError(
        `cannot adopt ${m.name}: it is already controlled by ${other.kind} ${other.name} (uid ${other.uid})`,
      );
    }
    if (!refs.some((r) => r.uid === p.uid)) {
      m.ownerReferences = [...refs, {
        apiVersion: apiVersionOf(parent.type),
        kind: parent.type.kind,
        name: p.name,
        uid: p.uid,
        controller: true,
        blockOwnerDeletion: true,
      }];
    }
  }
  m.labels = { ...m.labels, ...parentLabels(parent.type, p.name) };
  m.annotations = { ...m.annotations, [PARENT_ANNOTATION]: `${parent.cluster}/${p.namespace ?? ""}/${p.name}` };
  return child as Adopted<O>;
}

/** Throws when `owns` watches `type` only where a parent exists: a child in `cluster` would go unwatched. */
function refuseSameClusterOnly(
  owns: readonly (ResourceType | OwnedResource)[],
  type: ResourceType,
  name: string,
  cluster: string,
): void {
  const entry = owns.map((o) => "type" in o ? o : { type: o } as OwnedResource)
    .find((o) => o.type.group === type.group && o.type.plural === type.plural);
  if (entry && !entry.acrossClusters) {
    throw new TerminalError(
      `cannot adopt ${type.kind} ${name} into cluster ${cluster}: owns declares ${type.kind} without ` +
        `acrossClusters: true, so its watch runs only in clusters where a parent exists and would miss this child`,
    );
  }
}

/**
 * An adopted object: its metadata holds the parent's labels and annotation, and its owner reference where allowed.
 *
 * @example
 * ```ts
 * import type { Adopted } from "./adopt.ts";
 * function parentOf(child: Adopted<{ metadata: { name: string } }>): string {
 *   return child.metadata.annotations["operator-hub.dev/parent"];
 * }
 * ```
 */
export type Adopted<O extends NewObject> = O & {
  /** The child's metadata, as adopt() left it. */
  metadata: {
    /** The parent's namespace where the child had none. */
    namespace?: string;
    /** The parent's labels added. */
    labels: Record<string, string>;
    /** The parent's annotation added. */
    annotations: Record<string, string>;
    /** The parent's owner reference, where Kubernetes can honour one. */
    ownerReferences?: OwnerReference[];
  };
};

/** The two labels adopt() puts on a child of `parent` named `name`. */
export function parentLabels(parent: ResourceType, name: string): Record<string, string> {
  return { [PARENT_RESOURCE_LABEL]: labelValue(qualifiedName(parent)), [PARENT_NAME_LABEL]: labelValue(name) };
}

const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

/** `value` when it is a valid label value, else its first 54 characters, "-" and an 8-hex-digit hash. */
export function labelValue(value: string): string {
  if (value.length <= 63 && LABEL_VALUE.test(value)) return value;
  let h = 0x811c9dc5; // FNV-1a, 32 bits: stable across processes, so a hashed label selects the same children.
  for (let i = 0; i < value.length; i++) h = Math.imul(h ^ value.charCodeAt(i), 0x01000193) >>> 0;
  const head = value.slice(0, 54).replace(/[^-A-Za-z0-9_.]/g, "-").replace(/^[^A-Za-z0-9]+|[^A-Za-z0-9]+$/g, "");
  return `${head ? `${head}-` : ""}${h.toString(16).padStart(8, "0")}`;
}

/**
 * A resource an operator owns: its objects' changes requeue their parent (controller-runtime's `Owns`).
 *
 * @example
 * ```ts
 * import type { OwnedResource } from "./adopt.ts";
 * import { kinds } from "./kinds.ts";
 * const owned: OwnedResource = { type: kinds.Deployment, verbs: ["get", "create", "patch"] };
 * ```
 */
export interface OwnedResource {
  /** The child resource, e.g. `kinds.Deployment`. */
  type: ResourceType;
  /** What the operator does with it (added to its `uses`); its `list` and `watch` are implied. */
  verbs?: readonly Verb[];
  /** Only in the clusters this accepts (default every engaged cluster). */
  clusters?(cluster: string): boolean;
  /**
   * List and watch the children as metadata only (PartialObjectMetadata, see WatchedResource.metadataOnly): what
   * `owns` reads of a child is its metadata, so its `data` or `spec` never crosses the wire. Default false.
   *
   * @example
   * ```ts
   * import type { OwnedResource } from "./adopt.ts";
   * import { kinds } from "./kinds.ts";
   * const owned: OwnedResource = { type: kinds.ConfigMap, verbs: ["get", "create"], metadataOnly: true };
   * ```
   */
  metadataOnly?: boolean;
  /**
   * Children of this kind may live in other clusters than their parent's (`adopt(child, { cluster })`). Then their
   * watch runs in every engaged cluster `clusters` accepts. Default false: it runs in a cluster only while a parent
   * exists there, and a handler's `adopt` into another cluster is refused with an error naming this option.
   */
  acrossClusters?: boolean;
}

/**
 * The parents a changed child maps to, in the cluster it was seen in: the controller owner reference of `parent`'s
 * group and kind, else the {@link PARENT_ANNOTATION} of a child labelled for `parent`'s resource (a child in another
 * cluster or namespace). [] for anything else.
 */
export function parentRequests(parent: ResourceType, child: StoredObject, cluster: string): Request[] {
  const m = child.metadata as StoredObject["metadata"] & { ownerReferences?: OwnerReference[] };
  const groupOf = (apiVersion: string) => apiVersion.includes("/") ? apiVersion.split("/")[0] : "";
  const ref = (m.ownerReferences ?? []).find((r) => r.controller);
  if (ref) {
    if (ref.kind !== parent.kind || groupOf(ref.apiVersion) !== parent.group) return [];
    return [{ cluster, namespace: parent.namespaced === false ? "" : m.namespace ?? "", name: ref.name }];
  }
  if (m.labels?.[PARENT_RESOURCE_LABEL] !== labelValue(qualifiedName(parent))) return [];
  const note = m.annotations?.[PARENT_ANNOTATION];
  if (!note) return [];
  // cluster/namespace/name, split from the right: a cluster name may hold "/" (an inventory's namespace/name).
  const parts = note.split("/");
  if (parts.length < 3) return [];
  const name = parts.pop()!;
  const namespace = parts.pop()!;
  return name ? [{ cluster: parts.join("/"), namespace, name }] : [];
}

/**
 * The watch that `owns` means: `owned`'s objects labelled for `parent`'s resource (so the hub never lists or caches
 * the others), each change requeueing its parent (see {@link parentRequests}).
 */
export function ownedWatch(parent: ResourceType, owned: OwnedResource): WatchedResource {
  return {
    type: owned.type,
    ...(owned.clusters ? { clusters: (c: string) => owned.clusters!(c) } : {}),
    labelSelector: `${PARENT_RESOURCE_LABEL}=${labelValue(qualifiedName(parent))}`,
    ...(owned.metadataOnly ? { metadataOnly: true } : {}),
    project: keepOwnership,
    map: (object, cluster) => parentRequests(parent, object, cluster),
    // Same-cluster children: watched only where a parent exists (the first one's watch starts before its handler).
    ...(owned.acrossClusters
      ? {}
      : { neededIn: (cluster: string, _cached: unknown, count: (c: string) => number) => count(cluster) > 0 }),
  };
}

/** Identity, labels, annotations and owner references: what parentRequests reads (of a PartialObjectMetadata too). */
function keepOwnership(raw: Record<string, unknown>): StoredObject {
  const refs = (raw.metadata as { ownerReferences?: unknown } | undefined)?.ownerReferences;
  return { metadata: { ...objectMeta(raw, { labels: true }), ...(refs ? { ownerReferences: refs } : {}) } };
}

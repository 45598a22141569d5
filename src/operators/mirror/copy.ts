// What a Mirror's copy looks like: the labels and annotations that name its source, and the compare-before-write rule.

import { type NewObject, objectMeta, type StoredObject } from "../../sdk/mod.ts";

/** Every copy carries this label (value MIRROR_LABEL_VALUE); the hub never touches an object without it. */
export const MIRROR_LABEL = "operator-hub.dev/mirror";
/** The value of MIRROR_LABEL on every copy. */
export const MIRROR_LABEL_VALUE = "copy";
/** Annotations on a copy naming its source and the Mirror that made it. */
export const ANNOTATIONS = {
  sourceCluster: "operator-hub.dev/source-cluster",
  sourceNamespace: "operator-hub.dev/source-namespace",
  sourceName: "operator-hub.dev/source-name",
  sourceResourceVersion: "operator-hub.dev/source-resource-version",
  /** `namespace/name` of the Mirror in the source cluster. */
  mirror: "operator-hub.dev/mirror",
} as const;

/** The fields of a ConfigMap or Secret that are copied. */
const CONTENT = ["data", "binaryData", "type", "immutable"] as const;

/** Keeps what a copy is compared on: name, labels, annotations and the copied fields (and resourceVersion). */
export function projectContent(raw: Record<string, unknown>): StoredObject {
  const out: StoredObject = { metadata: objectMeta(raw, { labels: true }) };
  for (const field of CONTENT) if (raw[field] !== undefined) out[field] = raw[field];
  return out;
}

/** Where a copy comes from. */
export interface CopySource {
  /** The home cluster's name. */
  cluster: string;
  /** The source object (projected by projectContent). */
  object: StoredObject;
  /** `namespace/name` of the Mirror. */
  mirror: string;
}

/** The copy to apply into `namespace` of a target cluster. */
export function desiredCopy(source: CopySource, namespace: string): NewObject {
  const o = source.object;
  const copy: NewObject = {
    metadata: {
      name: o.metadata.name,
      namespace,
      labels: { [MIRROR_LABEL]: MIRROR_LABEL_VALUE },
      annotations: {
        [ANNOTATIONS.sourceCluster]: source.cluster,
        [ANNOTATIONS.sourceNamespace]: o.metadata.namespace ?? "",
        [ANNOTATIONS.sourceName]: o.metadata.name,
        [ANNOTATIONS.sourceResourceVersion]: o.metadata.resourceVersion ?? "",
        [ANNOTATIONS.mirror]: source.mirror,
      },
    },
  };
  for (const field of CONTENT) if (o[field] !== undefined) copy[field] = o[field];
  return copy;
}

/** Whether `existing` carries the hub's label. */
export function isCopy(existing: StoredObject): boolean {
  return labelsOf(existing)[MIRROR_LABEL] === MIRROR_LABEL_VALUE;
}

/** The Mirror (`namespace/name`) a labelled copy names, and its source cluster; undefined when not a copy. */
export function mirrorOf(object: StoredObject): { cluster: string; namespace: string; name: string } | undefined {
  if (!isCopy(object)) return undefined;
  const a = annotationsOf(object);
  const mirror = a[ANNOTATIONS.mirror];
  const cluster = a[ANNOTATIONS.sourceCluster];
  const slash = mirror?.indexOf("/") ?? -1;
  if (!cluster || slash <= 0) return undefined;
  return { cluster, namespace: mirror.slice(0, slash), name: mirror.slice(slash + 1) };
}

/**
 * What must change for `existing` to equal `desired`: nothing (undefined), an apply, and the keys of `data` /
 * `binaryData` written by someone else that the apply leaves behind (removed with a merge patch).
 */
export function copyDiff(
  existing: StoredObject | undefined,
  desired: NewObject,
): { apply: boolean; extraKeys: Record<string, string[]> } | undefined {
  if (!existing) return { apply: true, extraKeys: {} };
  let apply = false;
  const want = annotationsOf(desired);
  const have = annotationsOf(existing);
  for (const [k, v] of Object.entries(want)) if (have[k] !== v) apply = true;
  if (!isCopy(existing)) apply = true;
  const extraKeys: Record<string, string[]> = {};
  for (const field of CONTENT) {
    const a = desired[field];
    const b = existing[field];
    if (field === "data" || field === "binaryData") {
      const wantMap = (a ?? {}) as Record<string, unknown>;
      const haveMap = (b ?? {}) as Record<string, unknown>;
      for (const [k, v] of Object.entries(wantMap)) if (haveMap[k] !== v) apply = true;
      const extra = Object.keys(haveMap).filter((k) => !(k in wantMap));
      if (extra.length) extraKeys[field] = extra;
    } else if (a !== undefined && JSON.stringify(a) !== JSON.stringify(b)) {
      apply = true;
    }
  }
  return apply || Object.keys(extraKeys).length ? { apply, extraKeys } : undefined;
}

function labelsOf(o: StoredObject): Record<string, string> {
  return ((o.metadata as { labels?: Record<string, string> }).labels) ?? {};
}

function annotationsOf(o: StoredObject | NewObject): Record<string, string> {
  return ((o.metadata as { annotations?: Record<string, string> }).annotations) ?? {};
}

// One target cluster of a Mirror: bring its copy in line with the source, or remove it; every failure is that row's.

import {
  type ClusterConnection,
  failureStateOf,
  ignoreNotFound,
  isConflict,
  isNotFound,
  type ReconcileScope,
  type ResourceType,
  type StoredObject,
} from "../../sdk/mod.ts";
import { copyDiff, desiredCopy, isCopy, MIRROR_LABEL, mirrorOf } from "./copy.ts";
import type { TargetOutcome, TargetState } from "./mirror_status.ts";
import type { NamespacePolicy } from "./namespace_policy.ts";

/** The copies' field manager for server-side apply. */
export const FIELD_MANAGER = "operator-hub-mirror";

/** Namespaces, created for a copy only when the NamespacePolicy allows it. */
export const NAMESPACE: ResourceType = {
  group: "",
  version: "v1",
  kind: "Namespace",
  plural: "namespaces",
  namespaced: false,
};

/** What one target's sync needs. */
export interface SyncInput {
  type: ResourceType;
  source: StoredObject | undefined;
  sourceName: string;
  home: string;
  mirror: string;
  namespace: string;
  policy: NamespacePolicy;
}

/** Brings one target's copy in line; every failure becomes that target's row. */
export async function syncTarget(scope: ReconcileScope, cluster: string, s: SyncInput): Promise<TargetOutcome> {
  const conn = scope.cluster(cluster);
  if (!conn) return { cluster, state: "Unreachable", lastError: `cluster ${cluster} is not engaged by the hub` };
  if (!s.source) {
    return { cluster, state: "Pending", lastError: `the source ${s.sourceName} does not exist in cluster ${s.home}` };
  }
  const desired = desiredCopy({ cluster: s.home, object: s.source, mirror: s.mirror }, s.namespace);
  const ref = { namespace: s.namespace, name: s.source.metadata.name };
  try {
    const client = conn.client(s.type);
    const existing = await client.get(ref).catch(ignoreNotFound);
    if (existing && (!isCopy(existing) || !sameMirror(existing, s.home, s.mirror))) {
      return {
        cluster,
        state: "Conflict",
        lastError: `${s.type.kind} ${ref.namespace}/${ref.name} exists in cluster ${cluster} and was not made by ` +
          `this Mirror (no ${MIRROR_LABEL} label or another source): left untouched`,
      };
    }
    const diff = copyDiff(existing, desired);
    if (diff) {
      if (!existing && s.policy.createsNamespaces) await ensureNamespace(conn, s.namespace);
      if (diff.apply) {
        await client.apply(desired, { fieldManager: FIELD_MANAGER, force: true }).catch((err) => {
          if (existing || s.policy.createsNamespaces || !isNotFound(err)) throw err;
          throw new Error(
            `namespace ${s.namespace} does not exist in cluster ${cluster}: the hub creates no namespace when ` +
              `--mirror-namespaces is set`,
            { cause: err },
          );
        });
      }
      const removals = Object.fromEntries(
        Object.entries(diff.extraKeys).map(([field, keys]) => [field, Object.fromEntries(keys.map((k) => [k, null]))]),
      );
      if (Object.keys(removals).length) await client.patch(ref, removals);
    }
    return { cluster, state: "InSync", lastError: null, syncedTo: s.source.metadata.resourceVersion ?? "" };
  } catch (err) {
    if (scope.signal.aborted) throw err;
    return { cluster, state: stateOf(err), lastError: (err as Error).message ?? String(err) };
  }
}

/** Deletes one target's copy if it is this Mirror's; the error text when it could not be done, else undefined. */
export async function removeCopy(
  scope: ReconcileScope,
  cluster: string,
  type: ResourceType,
  namespace: string,
  name: string,
  mirror: string,
): Promise<string | undefined> {
  const conn = scope.cluster(cluster);
  if (!conn) return `cluster ${cluster} is not engaged by the hub`;
  try {
    const client = conn.client(type);
    const existing = await client.get({ namespace, name }).catch(ignoreNotFound);
    if (!existing || !isCopy(existing) || mirrorOf(existing)?.name === undefined) return undefined;
    const m = mirrorOf(existing)!;
    if (`${m.namespace}/${m.name}` !== mirror) return undefined;
    await client.delete({ namespace, name }).catch(ignoreNotFound);
    return undefined;
  } catch (err) {
    if (scope.signal.aborted) throw err;
    return (err as Error).message ?? String(err);
  }
}

async function ensureNamespace(conn: ClusterConnection, namespace: string): Promise<void> {
  const client = conn.client(NAMESPACE);
  const found = await client.get({ name: namespace }).catch(ignoreNotFound);
  if (found) return;
  await client.create({ metadata: { name: namespace } }).catch((err) => {
    if (!isConflict(err) && !isNotFound(err)) throw err;
  });
}

function sameMirror(copy: StoredObject, home: string, mirror: string): boolean {
  const m = mirrorOf(copy);
  return !!m && m.cluster === home && `${m.namespace}/${m.name}` === mirror;
}

function stateOf(err: unknown): TargetState {
  const state = failureStateOf(err);
  if (state === "forbidden" || state === "unauthorized") return "Forbidden";
  if (state === "unreachable") return "Unreachable";
  return "Pending";
}

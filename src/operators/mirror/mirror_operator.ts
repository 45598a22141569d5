// The Mirror operator: keeps a copy of a ConfigMap or Secret of the home cluster in every selected cluster.

import {
  type ClusterConnection,
  defineOperator,
  failureStateOf,
  ignoreNotFound,
  isConflict,
  isNotFound,
  type Operator,
  type ReconcileScope,
  type Request,
  type ResourceType,
  type StoredObject,
} from "../../sdk/mod.ts";
import { copyDiff, desiredCopy, isCopy, MIRROR_LABEL, MIRROR_LABEL_VALUE, mirrorOf, projectContent } from "./copy.ts";
import { type MirrorStatus, nextStatus, sameStatus, type TargetOutcome, type TargetState } from "./mirror_status.ts";

/** The Mirror CRD (crds/mirror.yaml). */
export const MIRROR_RESOURCE: ResourceType = {
  group: "demo.operator",
  version: "v1",
  kind: "Mirror",
  plural: "mirrors",
};
/** The copies' field manager for server-side apply. */
export const FIELD_MANAGER = "operator-hub-mirror";
/** The finalizer that removes every copy before a Mirror goes. */
export const MIRROR_FINALIZER = "operator-hub.dev/mirror-copies";

const CONFIG_MAP: ResourceType = { group: "", version: "v1", kind: "ConfigMap", plural: "configmaps" };
const SECRET: ResourceType = { group: "", version: "v1", kind: "Secret", plural: "secrets" };
const NAMESPACE: ResourceType = {
  group: "",
  version: "v1",
  kind: "Namespace",
  plural: "namespaces",
  namespaced: false,
};

/** A Mirror's `spec`. */
export interface MirrorSpec {
  source: { kind: "ConfigMap" | "Secret"; name: string };
  clusters: string[];
  targetNamespace?: string;
}

/** How the Mirror operator is built. */
export interface MirrorOptions {
  /** The home cluster: Mirrors are acted on there only, and their sources live there. */
  homeCluster: string;
  /** How long the finalizer retries an unreachable target before it gives up on its copy. Default 10 minutes. */
  orphanOnUnreachableAfterMs?: number;
  /** Longest pause before looking again at a target that is not in sync. Default 30 s. */
  maxRetryMs?: number;
  /** How often a Mirror in sync is looked at again (a safety net: clusters engaged later are queued at once). Default 60 s. */
  resyncMs?: number;
  now?: () => number;
}

/**
 * Guarantees:
 * - acts only on Mirrors in the home cluster; reads the source there and server-side applies the copy into every
 *   selected target only when it differs (0 writes when nothing changed);
 * - never writes an object that lacks MIRROR_LABEL, or that another Mirror made (the row reads `Conflict`);
 * - a target that fails changes only its own row and is retried with backoff; the status is written only when it
 *   differs from the one stored;
 * - the finalizer deletes every copy before the Mirror goes, giving up on a target unreachable for longer than
 *   `orphanOnUnreachableAfterMs` with a Warning Event; a cluster removed from `spec.clusters` loses its copy.
 */
export function mirrorOperator(options: MirrorOptions): Operator {
  const home = options.homeCluster;
  const orphanAfterMs = options.orphanOnUnreachableAfterMs ?? 600_000;
  const maxRetryMs = options.maxRetryMs ?? 30_000;
  const resyncMs = options.resyncMs ?? 60_000;
  const now = options.now ?? Date.now;
  const failures = new Map<string, number>();

  const sourceWatch = (type: ResourceType) => ({
    type,
    clusters: (c: string) => c === home,
    map: (obj: StoredObject, _c: string, cached: (c: string) => StoredObject[]): Request[] =>
      cached(home).filter((m) => {
        const spec = m.spec as MirrorSpec | undefined;
        return m.metadata.namespace === obj.metadata.namespace && spec?.source?.kind === type.kind &&
          spec.source.name === obj.metadata.name;
      }).map((m) => ({ cluster: home, namespace: m.metadata.namespace ?? "", name: m.metadata.name })),
  });
  const copyWatch = (type: ResourceType) => ({
    type,
    labelSelector: `${MIRROR_LABEL}=${MIRROR_LABEL_VALUE}`,
    map: (obj: StoredObject): Request[] => {
      const m = mirrorOf(obj);
      return m && m.cluster === home ? [m] : [];
    },
  });
  const copyVerbs = ["get", "list", "watch", "create", "patch", "delete", "apply"] as const;

  return defineOperator({
    name: "mirror",
    resource: MIRROR_RESOURCE,
    // Mirrors live in the home cluster only: the others need no Mirror CRD, only the copies' verbs and watch.
    resourceClusters: (cluster) => cluster === home,
    verbs: ["get", "patch", "patchStatus"],
    events: true,
    project: projectMirror,
    uses: [
      { type: CONFIG_MAP, verbs: [...copyVerbs], project: projectContent },
      { type: SECRET, verbs: [...copyVerbs], project: projectContent },
      { type: NAMESPACE, verbs: ["get", "create"] },
    ],
    watches: [sourceWatch(CONFIG_MAP), sourceWatch(SECRET), copyWatch(CONFIG_MAP), copyWatch(SECRET)],
    // A cluster engaged later gets its copies at once: every Mirror that selects it is reconciled.
    onEngage: (cluster, cached) =>
      cluster === home ? [] : cached(home).filter((m) => {
        const clusters = (m.spec as MirrorSpec | undefined)?.clusters ?? [];
        return clusters.includes("*") || clusters.includes(cluster);
      }).map((m) => ({ cluster: home, namespace: m.metadata.namespace ?? "", name: m.metadata.name })),
    async reconcile(req, scope) {
      if (req.cluster !== home) return;
      const mirror = scope.client.cached(req);
      const key = `${req.namespace}/${req.name}`;
      if (!mirror) {
        failures.delete(key);
        return;
      }
      const spec = mirror.spec as MirrorSpec;
      const status = mirror.status as Partial<MirrorStatus> | undefined;
      const type = spec.source.kind === "Secret" ? SECRET : CONFIG_MAP;
      const targetNamespace = spec.targetNamespace || req.namespace;
      const finalizers = (mirror.metadata as { finalizers?: string[] }).finalizers ?? [];
      const previous = (status?.targets ?? []).map((r) => r.cluster);

      if (mirror.metadata.deletionTimestamp) {
        if (!finalizers.includes(MIRROR_FINALIZER)) return;
        const targets = [...new Set([...previous, ...selectTargets(spec.clusters, scope, home)])];
        const left: string[] = [];
        await Promise.all(targets.map(async (cluster) => {
          const error = await removeCopy(scope, cluster, type, targetNamespace, spec.source.name, key);
          if (error) left.push(`${cluster}: ${error}`);
        }));
        const since = Date.parse(mirror.metadata.deletionTimestamp);
        if (left.length && now() - since < orphanAfterMs) {
          scope.logger.warn("copies not removed yet; retrying", { left });
          return { requeueAfterMs: backoff(failures, key, maxRetryMs) };
        }
        if (left.length) {
          await scope.events.record(
            mirror,
            "Warning",
            "CopiesOrphaned",
            `gave up removing copies after ${Math.round(orphanAfterMs / 1000)} s: ${left.join("; ")}`,
          );
        }
        await scope.client.patch(req, {
          metadata: {
            resourceVersion: mirror.metadata.resourceVersion,
            finalizers: finalizers.filter((f) => f !== MIRROR_FINALIZER),
          },
        }).catch(ignoreNotFound);
        failures.delete(key);
        return;
      }
      if (!finalizers.includes(MIRROR_FINALIZER)) {
        await scope.client.patch(req, {
          metadata: { resourceVersion: mirror.metadata.resourceVersion, finalizers: [...finalizers, MIRROR_FINALIZER] },
        });
        return; // the watch event of that write reconciles again
      }

      const selected = selectTargets(spec.clusters, scope, home);
      const homeConn = scope.cluster(home);
      const source = homeConn
        ? await homeConn.client(type).get({ namespace: req.namespace, name: spec.source.name }).catch(ignoreNotFound)
        : undefined;
      const outcomes: TargetOutcome[] = await Promise.all(selected.map((cluster) =>
        syncTarget(scope, cluster, {
          type,
          source,
          sourceName: `${type.kind} ${req.namespace}/${spec.source.name}`,
          home,
          mirror: key,
          namespace: targetNamespace,
        })
      ));
      // Clusters no longer selected lose their copy; one that cannot be reached yet keeps its row until it can.
      for (const cluster of previous.filter((c) => !selected.includes(c))) {
        const error = await removeCopy(scope, cluster, type, targetNamespace, spec.source.name, key);
        if (error) {
          outcomes.push({ cluster, state: "Pending", lastError: `removing the copy: ${error}` });
        }
      }
      const next = nextStatus(status, outcomes, {
        generation: mirror.metadata.generation,
        source: `${spec.source.kind}/${spec.source.name}`,
        now: new Date(now()).toISOString(),
      });
      if (!sameStatus(status, next)) {
        await scope.client.patchStatus(mirror, next as unknown as Record<string, unknown>);
      }
      if (next.syncedClusters < outcomes.length) return { requeueAfterMs: backoff(failures, key, maxRetryMs) };
      failures.delete(key);
      return { requeueAfterMs: resyncMs };
    },
  });
}

/** The target clusters `spec.clusters` selects now: `["*"]` is every engaged cluster but the home cluster. */
export function selectTargets(clusters: readonly string[], scope: Pick<ReconcileScope, "clusters">, home: string) {
  if (clusters.includes("*")) return (scope.clusters?.() ?? []).filter((c) => c !== home).sort();
  return [...new Set(clusters)].filter((c) => c !== home).sort();
}

interface SyncInput {
  type: ResourceType;
  source: StoredObject | undefined;
  sourceName: string;
  home: string;
  mirror: string;
  namespace: string;
}

/** Brings one target's copy in line; every failure becomes that target's row. */
async function syncTarget(scope: ReconcileScope, cluster: string, s: SyncInput): Promise<TargetOutcome> {
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
      if (!existing) await ensureNamespace(conn, s.namespace);
      if (diff.apply) await client.apply(desired, { fieldManager: FIELD_MANAGER, force: true });
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
async function removeCopy(
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

function backoff(failures: Map<string, number>, key: string, maxMs: number): number {
  const n = (failures.get(key) ?? 0) + 1;
  failures.set(key, n);
  return Math.min(maxMs, 1000 * 2 ** Math.min(n - 1, 10));
}

/** The Mirror as the cache keeps it: identity, finalizers, spec and status. */
function projectMirror(raw: Record<string, unknown>): StoredObject {
  const m = (raw.metadata ?? {}) as Record<string, unknown>;
  const metadata: Record<string, unknown> = {
    name: String(m.name ?? ""),
    namespace: m.namespace,
    uid: m.uid,
    resourceVersion: m.resourceVersion,
    generation: m.generation,
  };
  if (m.deletionTimestamp) metadata.deletionTimestamp = m.deletionTimestamp;
  if (m.finalizers) metadata.finalizers = m.finalizers;
  return { metadata: metadata as unknown as StoredObject["metadata"], spec: raw.spec, status: raw.status };
}

// The Mirror operator: keeps a copy of a ConfigMap or Secret of the home cluster in every selected cluster.

import {
  defineOperator,
  ignoreNotFound,
  type Operator,
  type ReconcileScope,
  type Request,
  type ResourceType,
  type StoredObject,
  type Verb,
} from "../../sdk/mod.ts";
import { MIRROR_LABEL, MIRROR_LABEL_VALUE, mirrorOf, projectContent } from "./copy.ts";
import { type MirrorStatus, nextStatus, refusedStatus, sameStatus, type TargetOutcome } from "./mirror_status.ts";
import { namespacePolicy } from "./namespace_policy.ts";
import { FIELD_MANAGER, NAMESPACE, removeCopy, syncTarget } from "./_targets.ts";

export { FIELD_MANAGER };

/** The Mirror CRD (crds/mirror.yaml). */
export const MIRROR_RESOURCE: ResourceType = {
  group: "demo.operator",
  version: "v1",
  kind: "Mirror",
  plural: "mirrors",
};
/** The finalizer that removes every copy before a Mirror goes. */
export const MIRROR_FINALIZER = "operator-hub.dev/mirror-copies";

const CONFIG_MAP: ResourceType = { group: "", version: "v1", kind: "ConfigMap", plural: "configmaps" };
const SECRET: ResourceType = { group: "", version: "v1", kind: "Secret", plural: "secrets" };

/** A Mirror's `spec`. */
export interface MirrorSpec {
  source: { kind: "ConfigMap" | "Secret"; name: string };
  clusters: string[];
  targetNamespace?: string;
}

/**
 * How the Mirror operator is built.
 *
 * @example
 * ```ts
 * import { Hub, Logger, mirrorOperator, type MirrorOptions } from "../../../hub.ts";
 *
 * const options: MirrorOptions = {
 *   homeCluster: "prod",
 *   namespaces: ["shop"],
 *   orphanOnUnreachableAfterMs: 5 * 60_000,
 * };
 * const hub = new Hub({ operators: [mirrorOperator(options)], logger: new Logger({ level: "info" }) });
 * ```
 */
export interface MirrorOptions {
  /** The home cluster: Mirrors are acted on there only, and their sources live there. */
  homeCluster: string;
  /**
   * `--mirror-namespaces`: the only target namespaces copies may go into; none is ever created. Default
   * unrestricted (any namespace but kube-system, kube-public and kube-node-lease, created when missing).
   */
  namespaces?: readonly string[];
  /** How long the finalizer retries an unreachable target before it gives up on its copy. Default 10 minutes. */
  orphanOnUnreachableAfterMs?: number;
  /** Longest pause before looking again at a target that is not in sync. Default 30 s. */
  maxRetryMs?: number;
  /** How often a Mirror in sync is looked at again (a safety net: clusters engaged later are queued at once). Default 60 s. */
  resyncMs?: number;
  /** Time source, ms since the epoch (tests on virtual time). Default `Date.now`. */
  now?: () => number;
}

/**
 * Guarantees:
 * - acts only on Mirrors in the home cluster; reads the source there and server-side applies the copy into every
 *   selected target only when it differs (0 writes when nothing changed);
 * - never writes an object that lacks MIRROR_LABEL, or that another Mirror made (the row reads `Conflict`);
 * - a target that fails changes only its own row and is retried with backoff; the status is written only when it
 *   differs from the one stored;
 * - a Mirror whose target namespace the NamespacePolicy refuses reads `state: Error` (one Warning Event when it
 *   turns so) and nothing is written into that namespace in any cluster; with an allow-list no namespace is created;
 * - the source watch caches only the objects Mirrors name (one watch each, by name), never the rest of the home
 *   cluster's ConfigMaps and Secrets; source and copy watches are metadata-only (no object's data is listed or watched);
 * - the finalizer deletes every copy before the Mirror goes, giving up on a target unreachable for longer than
 *   `orphanOnUnreachableAfterMs` with a Warning Event; a cluster removed from `spec.clusters` loses its copy.
 *
 * @example Mirrors of prod copied into every cluster engaged
 * ```ts
 * import { Hub, Logger, mirrorOperator } from "../../../hub.ts";
 * import type { ClusterAccess } from "../../../kube.ts";
 *
 * declare const clusters: Record<string, ClusterAccess>; // prod, staging, dev
 * const hub = new Hub({ operators: [mirrorOperator({ homeCluster: "prod" })], logger: new Logger({ level: "info" }) });
 * for (const [name, access] of Object.entries(clusters)) await hub.engage(name, access);
 * await hub.start(AbortSignal.timeout(60_000));
 * ```
 */
export function mirrorOperator(options: MirrorOptions): Operator {
  const home = options.homeCluster;
  const orphanAfterMs = options.orphanOnUnreachableAfterMs ?? 600_000;
  const maxRetryMs = options.maxRetryMs ?? 30_000;
  const resyncMs = options.resyncMs ?? 60_000;
  const now = options.now ?? Date.now;
  const failures = new Map<string, number>();
  const policy = namespacePolicy(options.namespaces);
  const scoped = policy.allowed ? { namespaces: policy.allowed } : {};

  // Both watches' map functions read only metadata (name, namespace, labels, annotations), and the reconcile reads
  // sources and copies with `get`: they list and watch metadata only, so no ConfigMap's or Secret's data reaches them.
  const sourceWatch = (type: ResourceType) => ({
    type,
    metadataOnly: true,
    clusters: (c: string) => c === home,
    objects: (cached: (c: string) => StoredObject[]) => sourcesOf(cached(home), type.kind),
    map: (obj: StoredObject, _c: string, cached: (c: string) => StoredObject[]): Request[] =>
      cached(home).filter((m) => {
        const spec = m.spec as MirrorSpec | undefined;
        return m.metadata.namespace === obj.metadata.namespace && spec?.source?.kind === type.kind &&
          spec.source.name === obj.metadata.name;
      }).map((m) => ({ cluster: home, namespace: m.metadata.namespace ?? "", name: m.metadata.name })),
  });
  // A cluster's copy watches run only while a Mirror targets it, or lists it as a target (its copy not removed yet).
  const targets = (m: StoredObject, cluster: string) => {
    const clusters = (m.spec as MirrorSpec | undefined)?.clusters ?? [];
    return clusters.includes("*") || clusters.includes(cluster) ||
      ((m.status as Partial<MirrorStatus> | undefined)?.targets ?? []).some((r) => r.cluster === cluster);
  };
  const copyWatch = (type: ResourceType) => ({
    type,
    metadataOnly: true,
    labelSelector: `${MIRROR_LABEL}=${MIRROR_LABEL_VALUE}`,
    ...scoped,
    neededIn: (cluster: string, cached: (c: string) => StoredObject[]) => cached(home).some((m) => targets(m, cluster)),
    neededAcrossClusters: true,
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
    finalizers: [MIRROR_FINALIZER],
    project: projectMirror,
    uses: [
      { type: CONFIG_MAP, verbs: [...copyVerbs], project: projectContent, ...scoped },
      { type: SECRET, verbs: [...copyVerbs], project: projectContent, ...scoped },
      // With an allow-list no namespace is created, so none is read or created (Roles cannot grant it anyway).
      ...(policy.createsNamespaces ? [{ type: NAMESPACE, verbs: ["get", "create"] as Verb[] }] : []),
    ],
    watches: [sourceWatch(CONFIG_MAP), sourceWatch(SECRET), copyWatch(CONFIG_MAP), copyWatch(SECRET)],
    // A cluster engaged later gets its copies at once: every Mirror that selects it is reconciled.
    onEngage: (cluster, cached) =>
      cluster === home ? [] : cached(home).filter((m) => targets(m, cluster))
        .map((m) => ({ cluster: home, namespace: m.metadata.namespace ?? "", name: m.metadata.name })),
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
      const refusal = policy.refusal(targetNamespace);

      if (mirror.metadata.deletionTimestamp) {
        if (!finalizers.includes(MIRROR_FINALIZER)) return;
        if (refusal) {
          // Nothing was written there: the finalizer goes without a single request into that namespace.
          await dropFinalizer(scope, req, mirror, finalizers);
          failures.delete(key);
          return;
        }
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
        await dropFinalizer(scope, req, mirror, finalizers);
        failures.delete(key);
        return;
      }
      if (refusal) {
        failures.delete(key);
        const next = refusedStatus(status, "NamespaceNotAllowed", refusal, {
          generation: mirror.metadata.generation,
          source: `${spec.source.kind}/${spec.source.name}`,
          now: new Date(now()).toISOString(),
        });
        if (!sameStatus(status, next)) {
          await scope.client.patchStatus(mirror, next as unknown as Record<string, unknown>);
          await scope.events.record(mirror, "Warning", "NamespaceNotAllowed", refusal);
        }
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
          policy,
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

/** The sources the Mirrors name, of one kind, each `namespace/name` once. */
function sourcesOf(mirrors: readonly StoredObject[], kind: string): { namespace: string; name: string }[] {
  const out = new Map<string, { namespace: string; name: string }>();
  for (const m of mirrors) {
    const source = (m.spec as MirrorSpec | undefined)?.source;
    if (source?.kind !== kind || !source.name) continue;
    const namespace = m.metadata.namespace ?? "";
    out.set(`${namespace}/${source.name}`, { namespace, name: source.name });
  }
  return [...out.values()];
}

/** Removes MIRROR_FINALIZER, guarded by the resourceVersion the reconcile saw (a 409 retries). */
async function dropFinalizer(scope: ReconcileScope, req: Request, mirror: StoredObject, finalizers: string[]) {
  await scope.client.patch(req, {
    metadata: {
      resourceVersion: mirror.metadata.resourceVersion,
      finalizers: finalizers.filter((f) => f !== MIRROR_FINALIZER),
    },
  }).catch(ignoreNotFound);
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

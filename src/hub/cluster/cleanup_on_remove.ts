// `--cleanup-on-remove`: a cluster that leaves the registry loses the hub's finalizers first, so its namespaces can go.

import { KubeClient } from "../../kube/mod.ts";
import type { Operator } from "../../runtime/mod.ts";
import { errorText, type Logger } from "../../util/mod.ts";
import { cleanupLine, cleanupTargets, removeFinalizers } from "./finalizer_cleanup.ts";
import { type EngageTarget, onRemoved } from "../providers/mod.ts";

/** Options of {@linkcode cleaningOnRemove}. */
export interface CleanupOnRemoveOptions {
  /** The operators hosted: their declared finalizers are removed from their resources' objects. */
  operators: readonly Operator[];
  /** Finalizers removed too (the SDK's handler finalizer, from the resources of operators that do not declare it). */
  also?: readonly string[];
  /** The hub's `--namespace` list; empty = every namespace. */
  namespaces: readonly string[];
  /** The cleanup of one cluster gives up after this long. Default 15 s. */
  timeoutMs?: number;
  /** Per request. Default 10 s. */
  requestTimeoutMs?: number;
  http2?: boolean;
  logger: Logger;
}

/**
 * `target` (the Hub, or the shard coordinator) with a `removed` hook that removes the hub's finalizers from a cluster
 * that left the registry (its Secret deleted, its file removed), after it was disengaged.
 *
 * Guarantees:
 * - the cleanup runs after the cluster's workers stopped, so no reconcile adds a finalizer back behind it; it uses
 *   the access the cluster was served with (its credentials are still valid: only the registration went);
 * - it is bounded by `timeoutMs` and never throws: a failure (the cluster unreachable, RBAC) is one warning line, and
 *   the registry carries on; a name registered again meanwhile waits for it (the registry syncs one name at a time).
 *
 * Assumptions: a name held because of a collision or a broken offer is not "removed" (an attacker's Secret could
 * otherwise trigger a cleanup of a cluster still in use); only a name no source offers any more is.
 */
export function cleaningOnRemove(target: EngageTarget, options: CleanupOnRemoveOptions): EngageTarget {
  const targets = cleanupTargets(options.operators, options.also);
  const log = options.logger;
  return onRemoved(target, async (name, access) => {
    const timeoutMs = options.timeoutMs ?? 15_000;
    const client = new KubeClient(access, {
      logger: log.child({ cluster: name }),
      userAgent: "operator-hub/cleanup",
      requestTimeoutMs: options.requestTimeoutMs ?? 10_000,
      http2: options.http2,
    });
    try {
      const result = await removeFinalizers(client, targets, {
        namespaces: options.namespaces,
        signal: AbortSignal.timeout(timeoutMs),
      });
      const fields = { cluster: name, objects: result.objects, finalizers: result.finalizers };
      if (result.error) {
        log.warn("finalizer cleanup of a removed cluster incomplete", { ...fields, error: result.error });
      } else log.info("finalizers removed from a removed cluster", { ...fields, summary: cleanupLine(result) });
    } catch (err) {
      log.warn("finalizer cleanup of a removed cluster failed", { cluster: name, error: errorText(err) });
    } finally {
      client.close();
    }
  });
}

// The Uuid operator (the seed's Kopf example): gives every Uuid object one generated UUID and the state Ok.

import { v4 as uuidv4 } from "uuid";
import {
  type ClusterContext,
  httpStatusOf,
  MissingResourceError,
  type Operator,
  type PermissionCheck,
  type Preparation,
  type ReconcileContext,
  type Reconciler,
  type Request,
  type StoredObject,
  TerminalError,
} from "../../runtime/mod.ts";
import { decide, OK_MESSAGE, type UuidStatus } from "./status_rule.ts";

export const GROUP = "demo.operator";
export const VERSION = "v1";
export const PLURAL = "uuid";
export const KIND = "Uuid";
const API_VERSION = `${GROUP}/${VERSION}`;

/** How a cluster's CRD stores status: through the status subresource, or inside the object (seed CRD). */
interface ClusterMode {
  statusSubresource: boolean;
}

/** A status patch of the main resource was accepted but not applied (the CRD now has a status subresource). */
class StatusDroppedError extends Error {
  override name = "StatusDroppedError";
}

function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** Keeps only what the rule needs: identity, versions and status. */
function project(raw: Record<string, unknown>): StoredObject {
  const m = raw.metadata as Record<string, unknown>;
  const out: StoredObject = {
    metadata: {
      name: m.name as string,
      namespace: m.namespace as string | undefined,
      uid: m.uid as string | undefined,
      resourceVersion: m.resourceVersion as string | undefined,
      generation: m.generation as number | undefined,
    },
  };
  if (m.deletionTimestamp) out.metadata.deletionTimestamp = m.deletionTimestamp as string;
  if (raw.status !== undefined) out.status = raw.status;
  return out;
}

function objectPath(namespace: string, name: string, subresource?: string): string {
  const base = `/apis/${GROUP}/${VERSION}/namespaces/${encodeURIComponent(namespace)}/${PLURAL}/${
    encodeURIComponent(name)
  }`;
  return subresource ? `${base}/${subresource}` : base;
}

/**
 * Guarantees: at most one status write per new object when nothing else writes it; a write carries
 * the resourceVersion it was decided on, so a conflicting writer (another replica, a user) wins and
 * this reconciler re-reads instead of overwriting; an existing valid UUID is never replaced; a write
 * counts only once the API server shows it, so a CRD whose status subresource appeared or vanished
 * since detection is re-detected instead of leaving the object without a UUID.
 */
class UuidReconciler implements Reconciler {
  readonly #modes: Map<string, ClusterMode>;
  readonly #newUuid: () => string;

  constructor(modes: Map<string, ClusterMode>, newUuid: () => string) {
    this.#modes = modes;
    this.#newUuid = newUuid;
  }

  async reconcile(req: Request, ctx: ReconcileContext): Promise<void> {
    let obj = ctx.cluster.store.get(`${req.namespace}/${req.name}`);
    // A conflict means somebody wrote first: decide again on what they wrote, a few times at most.
    for (let attempt = 0; attempt < 3; attempt++) {
      if (!obj || obj.metadata.deletionTimestamp) return;
      const status = await this.#desiredStatus(obj, ctx);
      if (!status) return;
      try {
        await this.#write(obj, status, ctx);
        return;
      } catch (err) {
        const code = httpStatusOf(err);
        if (code === 409) {
          obj = await this.#read(req, ctx);
          continue;
        }
        if ((code === 404 || err instanceof StatusDroppedError) && obj) {
          // The object is gone, or the CRD lost (404) or gained (status dropped) its status subresource since
          // the mode was detected: re-read and re-detect.
          await this.#detect(ctx.cluster, ctx.signal);
          obj = await this.#read(req, ctx);
          continue;
        }
        if (code === 422 || code === 400) {
          const message = `the API server rejected the status write: ${(err as Error).message}`;
          await ctx.cluster.events.record(this.#ref(obj), "Warning", "StatusRejected", message);
          throw new TerminalError(message, { cause: err });
        }
        throw err;
      }
    }
    throw new Error(`status of ${req.namespace}/${req.name} kept conflicting after 3 attempts; will retry`);
  }

  async #desiredStatus(obj: StoredObject, ctx: ReconcileContext): Promise<Record<string, unknown> | undefined> {
    const d = decide(obj.status as UuidStatus | undefined);
    const observedGeneration = obj.metadata.generation;
    switch (d.action) {
      case "none":
        return undefined;
      case "generate":
        return { uuid: this.#newUuid(), state: "Ok", message: OK_MESSAGE, observedGeneration };
      case "mark-ok":
        return { state: "Ok", message: OK_MESSAGE, observedGeneration };
      case "mark-error":
        ctx.logger.warn("Uuid has an invalid status.uuid; marking it Error", { message: d.message });
        await ctx.cluster.events.record(this.#ref(obj), "Warning", "InvalidUuid", d.message);
        return { state: "Error", message: d.message, observedGeneration };
    }
  }

  async #write(obj: StoredObject, status: Record<string, unknown>, ctx: ReconcileContext): Promise<void> {
    const mode = this.#modes.get(ctx.cluster.name) ?? { statusSubresource: true };
    const { namespace = "", name, resourceVersion } = obj.metadata;
    const written = await ctx.cluster.api.request<{ status?: Record<string, unknown> } | undefined>(
      "PATCH",
      objectPath(namespace, name, mode.statusSubresource ? "status" : undefined),
      {
        body: { metadata: { resourceVersion }, status },
        contentType: "application/merge-patch+json",
        signal: ctx.signal,
        // Only the seed-shaped CRD (no status subresource) needs the answer, to check the status stuck.
        discardBody: mode.statusSubresource,
      },
    );
    // A CRD that gained a status subresource since detection answers 200 to a status patch of the main resource
    // but drops it: without this check, the object would keep no UUID and no event would ever bring it back.
    if (
      !mode.statusSubresource && written && !Object.entries(status).every(([k, v]) => sameJson(written.status?.[k], v))
    ) {
      throw new StatusDroppedError(
        `the API server ignored the status written to ${namespace}/${name}: the CRD now has a status subresource`,
      );
    }
    if (status.uuid) ctx.logger.debug("uuid assigned", { uuid: status.uuid });
  }

  async #read(req: Request, ctx: ReconcileContext): Promise<StoredObject | undefined> {
    try {
      return project(
        await ctx.cluster.api.request<Record<string, unknown>>("GET", objectPath(req.namespace, req.name), {
          signal: ctx.signal,
        }),
      );
    } catch (err) {
      if (httpStatusOf(err) === 404) return undefined;
      throw err;
    }
  }

  #ref(obj: StoredObject) {
    return { apiVersion: API_VERSION, kind: KIND, metadata: obj.metadata };
  }

  /** Finds out whether the cluster's CRD has a status subresource, from discovery (no CRD read rights needed). */
  async #detect(cluster: ClusterContext, signal: AbortSignal): Promise<ClusterMode> {
    let list: { resources?: { name: string }[] };
    try {
      list = await cluster.api.request(`GET`, `/apis/${GROUP}/${VERSION}`, { signal });
    } catch (err) {
      if (httpStatusOf(err) === 404) throw this.#missing(cluster.name, err);
      throw err;
    }
    const names = new Set((list.resources ?? []).map((r) => r.name));
    if (!names.has(PLURAL)) throw this.#missing(cluster.name);
    const mode = { statusSubresource: names.has(`${PLURAL}/status`) };
    this.#modes.set(cluster.name, mode);
    return mode;
  }

  #missing(cluster: string, cause?: unknown): MissingResourceError {
    return new MissingResourceError(
      `cluster ${cluster} does not serve ${KIND} (${PLURAL}.${GROUP}/${VERSION}): install the CRD with ` +
        `\`kubectl apply -f crds/uuid.yaml\`; retrying`,
      { cause },
    );
  }

  async prepare(cluster: ClusterContext, signal: AbortSignal): Promise<Preparation> {
    const mode = await this.#detect(cluster, signal);
    const uuid = (verb: string, subresource?: string): PermissionCheck => ({
      verb,
      group: GROUP,
      resource: PLURAL,
      subresource,
    });
    return {
      permissions: [
        uuid("get"),
        uuid("list"),
        uuid("watch"),
        mode.statusSubresource ? uuid("patch", "status") : uuid("patch"),
        { verb: "create", group: "", resource: "events" },
      ],
    };
  }
}

export interface UuidOperatorOptions {
  /** UUID source, injectable for tests. Defaults to npm:uuid's v4. */
  newUuid?: () => string;
}

/** Builds the Uuid operator for a Hub. */
export function uuidOperator(options: UuidOperatorOptions = {}): Operator {
  const modes = new Map<string, ClusterMode>();
  const reconciler = new UuidReconciler(modes, options.newUuid ?? (() => uuidv4()));
  return {
    name: "uuid",
    resource: { group: GROUP, version: VERSION, plural: PLURAL },
    project,
    reconciler,
    needsReconcile: (obj) =>
      !obj.metadata.deletionTimestamp && decide(obj.status as UuidStatus | undefined).action !== "none",
    prepare: (cluster, signal) => reconciler.prepare(cluster, signal),
    forget: (cluster) => modes.delete(cluster),
  };
}

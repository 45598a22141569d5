// The Uuid operator (the seed's Kopf example): gives every Uuid object one generated UUID and the state Ok.

import { defineOperator, ignoreNotFound, type Operator, type ResourceType, retryOnConflict } from "../../sdk/mod.ts";
import { decide, statusFor } from "./status_rule.ts";
import type { Uuid } from "./uuid_resource.ts";

/** The seed's CRD, typed by uuid_resource.ts (for its type only: the hub never loads the schema library). */
export const UUID_RESOURCE: ResourceType<Uuid> = {
  group: "demo.operator",
  version: "v1",
  kind: "Uuid",
  plural: "uuid",
};

/**
 * Guarantees: one status write per new object (the pre-check keeps the watch event of that write out of the queue),
 * guarded by the resourceVersion it was decided on (a 409 re-reads and decides again); a valid UUID is never replaced.
 *
 * @example
 * ```ts
 * import { Hub, Logger, uuidOperator } from "../../../hub.ts";
 *
 * const hub = new Hub({ operators: [uuidOperator()], logger: new Logger({ level: "info" }) });
 * // In a test, a fixed UUID makes the status written predictable.
 * const fixed = uuidOperator({ newUuid: () => "6f1c2a9e-3d4b-4c5a-9e8f-0a1b2c3d4e5f" });
 * console.log(fixed.name, hub.operators()); // "uuid" ["uuid"]
 * ```
 */
export function uuidOperator(options: { newUuid?: () => string } = {}): Operator {
  const newUuid = options.newUuid ?? (() => crypto.randomUUID());
  return defineOperator({
    name: "uuid",
    resource: UUID_RESOURCE,
    // What decide() reads; the cache keeps these and the metadata identity, not the spec nor the rest of the status.
    reads: ["status.uuid", "status.state", "status.message"],
    verbs: ["get", "patchStatus"],
    events: true,
    needsReconcile: (obj) => !obj.metadata.deletionTimestamp && decide(obj.status).action !== "none",
    reconcile: (req, scope) =>
      retryOnConflict(async (attempt) => {
        const obj = attempt ? await scope.client.get(req).catch(ignoreNotFound) : scope.client.cached(req);
        const d = obj && !obj.metadata.deletionTimestamp ? decide(obj.status) : { action: "none" as const };
        if (!obj || d.action === "none") return;
        if (d.action === "mark-error") {
          scope.logger.warn("Uuid has an invalid status.uuid; marking it Error", { message: d.message });
          await scope.events.record(obj, "Warning", "InvalidUuid", d.message);
        }
        const status = statusFor(d, newUuid, obj.metadata.generation);
        try {
          await scope.client.patchStatus(obj, status);
        } catch (err) {
          return ignoreNotFound(err); // the object is gone
        }
        if (status.uuid) scope.logger.debug("uuid assigned", { uuid: status.uuid });
      }),
  });
}

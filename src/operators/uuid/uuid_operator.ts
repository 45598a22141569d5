// The Uuid operator (the seed's Kopf example): gives every Uuid object one generated UUID and the state Ok.

import { v4 } from "uuid";
import { defineOperator, ignoreNotFound, type Operator, retryOnConflict } from "../../sdk/mod.ts";
import { decide, statusFor, type UuidStatus } from "./status_rule.ts";

/** The seed's CRD: `uuid.demo.operator`, kind Uuid. */
export const UUID_RESOURCE = { group: "demo.operator", version: "v1", kind: "Uuid", plural: "uuid" };

/**
 * Guarantees: at most one status write per new object when nothing else writes it (the pre-check keeps
 * the watch event of that write out of the queue); each write carries the resourceVersion it was decided
 * on, so a concurrent writer wins and the object is re-read and decided again; a valid UUID is never replaced.
 */
export function uuidOperator(options: { newUuid?: () => string } = {}): Operator {
  const newUuid = options.newUuid ?? v4;
  const todo = (status: unknown) => decide(status as UuidStatus | undefined);
  return defineOperator({
    name: "uuid",
    resource: UUID_RESOURCE,
    verbs: ["get", "patchStatus"],
    events: true,
    needsReconcile: (obj) => !obj.metadata.deletionTimestamp && todo(obj.status).action !== "none",
    reconcile: (req, scope) =>
      retryOnConflict(async (attempt) => {
        const obj = attempt ? await scope.client.get(req).catch(ignoreNotFound) : scope.client.cached(req);
        const d = obj && !obj.metadata.deletionTimestamp ? todo(obj.status) : { action: "none" as const };
        if (!obj || d.action === "none") return;
        if (d.action === "mark-error") {
          scope.logger.warn("Uuid has an invalid status.uuid; marking it Error", { message: d.message });
          await scope.events.record(obj, "Warning", "InvalidUuid", d.message);
        }
        const status = statusFor(d, newUuid);
        const written = await scope.client.patchStatus(obj, { ...status, observedGeneration: obj.metadata.generation })
          .then(() => true).catch(ignoreNotFound);
        if (status.uuid && written) scope.logger.debug("uuid assigned", { uuid: status.uuid });
      }),
  });
}

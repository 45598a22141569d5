// The Uuid operator (the seed's Kopf example): gives every Uuid object one generated UUID and the state Ok.

import { v4 } from "uuid";
import { defineOperator, ignoreNotFound, type Operator, retryOnConflict } from "../../sdk/mod.ts";
import { decide, OK_MESSAGE, type UuidStatus } from "./status_rule.ts";

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
    reconcile: (req, { client, events, logger }) =>
      retryOnConflict(async (attempt) => {
        const obj = attempt ? await client.get(req).catch(ignoreNotFound) : client.cached(req);
        const d = obj && !obj.metadata.deletionTimestamp ? todo(obj.status) : { action: "none" as const };
        if (!obj || d.action === "none") return;
        if (d.action === "mark-error") {
          logger.warn("Uuid has an invalid status.uuid; marking it Error", { message: d.message });
          await events.record(obj, "Warning", "InvalidUuid", d.message);
        }
        const status = d.action === "mark-error"
          ? { state: "Error", message: d.message }
          : { ...(d.action === "generate" ? { uuid: newUuid() } : {}), state: "Ok", message: OK_MESSAGE };
        await client.patchStatus(obj, { ...status, observedGeneration: obj.metadata.generation }).catch(ignoreNotFound);
      }),
  });
}

// The seed article's Uuid operator, Kopf style: one on.create handler; its status and done-mark in one write.
//
//   deno task run --clusters prod,staging,dev examples/uuid_kopf_style.ts --operators none
//
// Kopf's original is `@kopf.on.create('uuid')` returning the status; here the returned fields are written
// to status in the same request as the handler's done-mark (status.handlers), so it never runs twice.

import { defineHandlers } from "../mod.ts";

/** The Kopf-style Uuid operator (named `uuid-kopf`, so it can run beside the built-in `uuid`). */
export const uuidKopfStyle = defineHandlers({
  name: "uuid-kopf",
  resource: { group: "demo.operator", version: "v1", kind: "Uuid", plural: "uuid" },
  create: async function assignUuid({ status, info }) {
    if (typeof status.uuid === "string" && status.uuid) return { state: "Ok" };
    const uuid = crypto.randomUUID();
    await info(`assigned UUID ${uuid}`, "UuidAssigned");
    return { uuid, state: "Ok", message: "UUID assigned by a Kopf-style handler" };
  },
});

// Every Kopf-style handler kind on the Uuid resource: create, update (with diff), field, resume, timer, delete.
//
//   deno task run --clusters prod --operators none examples/kopf_lifecycle.ts --event-level Normal
//
// The delete handler makes the hub add the finalizer `operator-hub.dev/handlers` to each object; it is removed
// once the handler succeeded, and the object is then gone.

import { defineHandlers, TemporaryError } from "../mod.ts";

/** A Uuid lifecycle operator (named `uuid-lifecycle`); run it without the built-in `uuid`. */
export const uuidLifecycle = defineHandlers({
  name: "uuid-lifecycle",
  resource: { group: "demo.operator", version: "v1", kind: "Uuid", plural: "uuid" },
  create: function created({ spec }) {
    // Retried every 0.5 s until spec.hold is no longer true.
    if (spec.hold === true) throw new TemporaryError("spec.hold is true", 500);
    return { state: "Created", message: "created" };
  },
  update: [
    // Any spec change: the diff names every path that changed.
    function changed({ diff }) {
      return { message: `updated: ${diff.map((d) => `${d.op} ${d.path}`).join(", ")}` };
    },
    // Only spec.replicas: old and new are that field's values.
    { id: "replicas", field: "spec.replicas", fn: ({ old, new: now }) => ({ state: `Replicas ${old}->${now}` }) },
  ],
  // Once per object per hub start, for objects created before it started.
  resume: function resumed() {
    return { message: "resumed" };
  },
  // Every second per object, until it is deleted; returning nothing writes nothing.
  timers: {
    intervalMs: 1000,
    fn: function heartbeat({ logger }) {
      logger.debug("heartbeat");
    },
  },
  delete: async function cleanup({ name, warn }) {
    await warn(`cleaned up after ${name}`, "CleanedUp");
  },
});

// The Greeting custom resource, written once: examples/greeting_operator.ts is typed by it, and
// `operator-hub crd examples/greeting_resource.ts` prints its CRD (examples/greeting_crd.yaml is that output).

import Type from "typebox";
import { defineResource } from "../resources.ts";

/** A Greeting asks the hub to write a greeting for spec.name into status.message. */
export const Greeting = defineResource({
  group: "examples.operator-hub.dev",
  version: "v1",
  kind: "Greeting",
  plural: "greetings",
  spec: Type.Object({
    name: Type.Optional(Type.String({ description: "Who to greet; the object's name when empty." })),
  }),
  status: Type.Object({
    message: Type.Optional(Type.String()),
    observedGeneration: Type.Optional(Type.Integer({ format: "int64" })),
  }),
  printerColumns: [{ name: "Message", type: "string", jsonPath: ".status.message" }],
});

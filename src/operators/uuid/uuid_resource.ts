// The Uuid custom resource (the seed article's `uuid.demo.operator`), defined once: its names, scope and schema type
// the Uuid operator's objects. crds/uuid.yaml stays the CRD as published (same names, columns and status fields).

import Type from "typebox";
import { defineResource, type ObjectOf } from "../../resources/mod.ts";

/** A Uuid asks the operator to assign one stable, random (version 4) UUID to it (`status.uuid`). */
export const Uuid = defineResource({
  group: "demo.operator",
  version: "v1",
  kind: "Uuid",
  plural: "uuid",
  singular: "uuid",
  shortNames: ["id", "uuid"],
  description: "Uuid asks the operator to assign one stable, random (version 4) UUID to this object.",
  spec: Type.Object({}, {
    additionalProperties: true,
    description: "Desired state. The operator needs no fields; any are kept as written.",
  }),
  // No enum or format: the operator must read any value written by hand and mark the object Error.
  status: Type.Object({
    uuid: Type.Optional(Type.String({ description: "The assigned UUID (canonical lowercase 8-4-4-4-12 form)." })),
    state: Type.Optional(Type.String({ description: "Ok or Error. Not an enum, so that unexpected values are read." })),
    message: Type.Optional(Type.String({ description: "Human-readable detail about the state." })),
    observedGeneration: Type.Optional(
      Type.Integer({
        format: "int64",
        minimum: 0,
        description: "The metadata.generation the status was computed from.",
      }),
    ),
  }),
  printerColumns: [
    { name: "UUID", type: "string", jsonPath: ".status.uuid", description: "The assigned UUID; it never changes." },
    {
      name: "Status",
      type: "string",
      jsonPath: ".status.state",
      description: "Ok, or Error when it cannot be reconciled.",
    },
    { name: "Age", type: "date", jsonPath: ".metadata.creationTimestamp" },
  ],
});

/** A Uuid object as the operator sees it. */
export type Uuid = ObjectOf<typeof Uuid>;

// The Website custom resource, written once: examples/website_operator.ts is typed by it, and
// `operator-hub crd examples/website_resource.ts` prints its CRD (examples/website_crd.yaml is that output).

import Type from "typebox";
import { defineResource } from "../resources.ts";

/** A Website gets a Deployment of spec.image, a Service and a ConfigMap holding spec.content. */
export const Website = defineResource({
  group: "examples.operator-hub.dev",
  version: "v1",
  kind: "Website",
  plural: "websites",
  description: "A web site: a Deployment of spec.image, a Service and a ConfigMap holding spec.content.",
  spec: Type.Object({
    image: Type.String({ description: "The container image the Website's Deployment runs.", minLength: 1 }),
    content: Type.Optional(
      Type.String({ description: "The page served, kept in the Website's ConfigMap as index.html." }),
    ),
  }),
  printerColumns: [{ name: "Image", type: "string", jsonPath: ".spec.image" }],
});

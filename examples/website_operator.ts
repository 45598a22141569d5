// A Website owns a Deployment, a Service and a ConfigMap: created (adopted) by a level-based handler, so a child
// deleted by hand comes back; the Deployment follows spec.image; the controller manager deletes them with the Website.
// Admission (with --webhook-bind-address): a Website whose image is `:latest` is refused, one without a tag is
// admitted with a warning, and a missing spec.content is filled in before the Website is stored.
//
//   kubectl apply -f examples/website_crd.yaml   # in each cluster
//   deno task run --clusters prod,staging,dev --operators none examples/website_operator.ts
//   deno task run --clusters prod,staging,dev --operators none --webhook-bind-address 127.0.0.1:9443 \
//     examples/website_operator.ts                # with its admission webhooks

import { AdmissionError, defineHandlers, ignoreNotFound, kinds, type NewObject } from "../mod.ts";
import { Website } from "./website_resource.ts";

/** The Website operator: `owns` requeues a Website when one of its children changes or goes. */
export const website = defineHandlers({
  name: "website",
  resource: Website,
  owns: [kinds.ConfigMap, kinds.Deployment, kinds.Service].map((type) => ({ type, verbs: ["get", "create", "patch"] })),
  async reconcile({ name, spec, adopt, clientFor }) {
    const app = { app: name };
    const containers = [{ name: "web", image: spec.image }];
    for (
      const [type, object] of [
        [kinds.ConfigMap, { metadata: { name }, data: { "index.html": spec.content ?? "" } }],
        [kinds.Deployment, {
          metadata: { name },
          spec: { selector: { matchLabels: app }, template: { metadata: { labels: app }, spec: { containers } } },
        }],
        [kinds.Service, { metadata: { name }, spec: { selector: app, ports: [{ port: 80 }] } }],
      ] as const
    ) {
      const child: NewObject = adopt(object, { type });
      const client = clientFor(type);
      if (!(await client.get(child.metadata).catch(ignoreNotFound))) await client.create(child);
    }
  },
  // Refuses a Website that cannot run a pinned image; warns about an image without a tag.
  validate: function image({ spec: { image }, warn }) {
    if (image.trim() === "") throw new AdmissionError("spec.image must name an image");
    if (image.endsWith(":latest")) throw new AdmissionError(`spec.image ${image}: pin a version instead of :latest`);
    if (!/[:@]/.test(image.split("/").pop()!)) warn(`spec.image ${image} has no tag: pin a version`);
  },
  // Fills the page served when the Website gives none.
  mutate: function defaults({ spec, name }) {
    spec.content ??= `<h1>${name}</h1>`;
  },
  update: {
    field: "spec.image",
    fn: async ({ clientFor, namespace, name, new: image }) => {
      const patch = { spec: { template: { spec: { containers: [{ name: "web", image }] } } } };
      await clientFor(kinds.Deployment).patch({ namespace, name }, patch, { type: "strategic" });
    },
  },
});

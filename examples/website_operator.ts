// A Website owns a Deployment, a Service and a ConfigMap: created (adopted) by a level-based handler, so a child
// deleted by hand comes back; the Deployment follows spec.image; the controller manager deletes them with the Website.
//
//   kubectl apply -f examples/website_crd.yaml   # in each cluster
//   deno task run --clusters prod,staging,dev --operators none examples/website_operator.ts

import { defineHandlers, type HandlerContext, ignoreNotFound, kinds, type NewObject } from "../mod.ts";

const children = ({ name, spec }: HandlerContext) => [
  { type: kinds.ConfigMap, object: { metadata: { name }, data: { "index.html": String(spec.content ?? "") } } },
  {
    type: kinds.Deployment,
    object: {
      metadata: { name },
      spec: {
        selector: { matchLabels: { app: name } },
        template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: "web", image: spec.image }] } },
      },
    },
  },
  { type: kinds.Service, object: { metadata: { name }, spec: { selector: { app: name }, ports: [{ port: 80 }] } } },
];

/** The Website operator: `owns` requeues a Website when one of its children changes or goes. */
export const website = defineHandlers({
  name: "website",
  resource: { group: "examples.operator-hub.dev", version: "v1", kind: "Website", plural: "websites" },
  owns: [kinds.ConfigMap, kinds.Deployment, kinds.Service].map((type) => ({ type, verbs: ["get", "create", "patch"] })),
  async reconcile(ctx) {
    for (const { type, object } of children(ctx)) {
      const child: NewObject = ctx.adopt(object, { type });
      const client = ctx.clientFor(type);
      if (!(await client.get(child.metadata).catch(ignoreNotFound))) await client.create(child);
    }
  },
  update: {
    field: "spec.image",
    fn: async ({ clientFor, namespace, name, new: image }) => {
      const patch = { spec: { template: { spec: { containers: [{ name: "web", image }] } } } };
      await clientFor(kinds.Deployment).patch({ namespace, name }, patch, { type: "strategic" });
    },
  },
});

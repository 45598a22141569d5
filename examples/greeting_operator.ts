// An operator of a user's own: every Greeting gets `status.message = "Hello, <spec.name>!"`. Imports only the SDK
// and its resource (examples/greeting_resource.ts), which types `spec` and `status` here.

import { defineOperator, ignoreNotFound } from "../mod.ts";
import type { ObjectOf } from "../resources.ts";
import { Greeting } from "./greeting_resource.ts";

type GreetingObject = ObjectOf<typeof Greeting>;

const message = (g: GreetingObject) => `Hello, ${g.spec?.name || g.metadata.name}!`;
const done = (g: GreetingObject) =>
  g.status?.message === message(g) && g.status.observedGeneration === g.metadata.generation;

/** The Greeting operator; its CRD is examples/greeting_crd.yaml. */
export const greetingOperator = defineOperator({
  name: "greeting",
  resource: Greeting,
  // The fields it reads: the cache keeps these (and the metadata identity) and nothing else of a Greeting.
  reads: ["spec.name", "status.message", "status.observedGeneration"],
  verbs: ["patchStatus"],
  needsReconcile: (g) => !done(g),
  async reconcile(request, { client }) {
    const g = client.cached(request);
    if (!g || done(g)) return;
    const status = { message: message(g), observedGeneration: g.metadata.generation };
    await client.patchStatus(g, status).catch(ignoreNotFound);
  },
});

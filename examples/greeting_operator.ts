// An operator of a user's own: every Greeting gets `status.message = "Hello, <spec.name>!"`. Imports only the SDK.

import { defineOperator, ignoreNotFound, type StoredObject } from "../mod.ts";

/** What the cache keeps of a Greeting (the default projection: identity, spec, status). */
interface Greeting extends StoredObject {
  spec?: { name?: string };
  status?: { message?: string; observedGeneration?: number };
}

const message = (g: Greeting) => `Hello, ${g.spec?.name || g.metadata.name}!`;
const done = (g: Greeting) => g.status?.message === message(g) && g.status.observedGeneration === g.metadata.generation;

/** The Greeting operator; its CRD is examples/greeting_crd.yaml. */
export const greetingOperator = defineOperator<Greeting>({
  name: "greeting",
  resource: { group: "examples.operator-hub.dev", version: "v1", kind: "Greeting", plural: "greetings" },
  verbs: ["patchStatus"],
  needsReconcile: (g) => !done(g),
  async reconcile(request, { client }) {
    const g = client.cached(request);
    if (!g || done(g)) return;
    const status = { message: message(g), observedGeneration: g.metadata.generation };
    await client.patchStatus(g, status).catch(ignoreNotFound);
  },
});

/**
 * The operator SDK's quick start: what an operator's code imports first. Write an operator as one reconcile with
 * {@link defineOperator} (controller-runtime's shape) or as Kopf-style handlers with {@link defineHandlers}; both
 * return an {@link Operator}, which the hub runs in every cluster it engages, with a typed, cached client per cluster
 * ({@link ResourceClient}), retries, events, finalizers and owned children ({@link adopt}). A custom resource is
 * written once with {@link defineResource}: a TypeBox schema gives typed `spec` and `status` in every handler, and
 * `operator-hub crd FILE` prints its CRD.
 *
 * The rest has entry points of its own: `"./sdk"` (the whole SDK: daemons, indexes, admission webhooks, runtime
 * types), `"./resources"` (custom resources and their CRDs), `"./testing"` (a multi-cluster test kit on real
 * apiservers), `"./hub"` (a Hub in a program of your own), `"./kube"` (Kubernetes access outside an operator) and
 * `"./cli"` (the command line: `deno task run my_operator.ts`).
 *
 * @example An operator as one reconcile
 * ```ts
 * import { defineOperator, ignoreNotFound } from "./mod.ts";
 *
 * export const hello = defineOperator({
 *   name: "hello",
 *   resource: { group: "examples.operator-hub.dev", version: "v1", kind: "Greeting", plural: "greetings" },
 *   verbs: ["patchStatus"],
 *   async reconcile(request, { client, logger }) {
 *     const obj = client.cached(request);
 *     if (!obj || obj.status) return;
 *     logger.info("greeting", { name: request.name, cluster: request.cluster });
 *     await client.patchStatus(obj, { message: `Hello, ${request.name}` }).catch(ignoreNotFound);
 *   },
 * });
 * ```
 *
 * @example The same as Kopf-style handlers
 * ```ts
 * import { defineHandlers, TemporaryError } from "./mod.ts";
 *
 * export const hello = defineHandlers({
 *   name: "hello",
 *   resource: { group: "examples.operator-hub.dev", version: "v1", kind: "Greeting", plural: "greetings" },
 *   create: async ({ name, spec, info }) => {
 *     if (typeof spec.who !== "string") throw new TemporaryError("spec.who is not set yet", 10_000);
 *     await info(`greeted ${spec.who}`, "Greeted");
 *     return { message: `Hello, ${spec.who} (from ${name})` };
 *   },
 * });
 * ```
 *
 * @module
 */

export {
  AdmissionError,
  adopt,
  defineHandlers,
  defineOperator,
  type HandlerContext,
  ignoreNotFound,
  isConflict,
  isNotFound,
  kinds,
  type NewObject,
  type Operator,
  PermanentError,
  type ReconcileScope,
  type Request,
  type ResourceClient,
  retryOnConflict,
  TemporaryError,
  TerminalError,
} from "./src/sdk/mod.ts";
export { defineResource } from "./src/resources/define_resource.ts";

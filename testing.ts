/**
 * The multi-cluster test kit, for operator authors' own `deno test`: {@link testEnv} starts N real local clusters
 * (one etcd; a kube-apiserver and a kube-controller-manager each, on free ports), installs CRDs from `defineResource`
 * results or files, runs operators in-process through a Hub (`env.run`), gives each test its own namespace, and
 * injects faults: a cluster cut off from the hub, its apiserver stopped and started, the hub's credential revoked.
 * {@link eventually} waits for a condition and, when it gives up, says what it saw last.
 *
 * The binaries are built once from the Go sources shipped with this package and cached in the user cache folder
 * (`$OPERATOR_HUB_CACHE`, `$XDG_CACHE_HOME/operator-hub` or `~/.cache/operator-hub`), as setup-envtest does;
 * `OPERATOR_HUB_KUBE_BIN=<folder>` uses prebuilt ones. Linux, with Go 1.26+ for the first build and `kubectl` for
 * `env.kubectl`. Run tests with `deno test -A`.
 *
 * @example A Website served in two clusters, one of them cut off
 * ```ts ignore
 * import { eventually, testEnv } from "@operator-hub/hub/testing";
 * import { kinds } from "@operator-hub/hub";
 * import { website } from "./website_operator.ts";
 * import { Website } from "./website_resource.ts";
 *
 * Deno.test("a Website in two clusters", async () => {
 *   await using env = await testEnv({ clusters: ["east", "west"], crds: [Website] });
 *   const namespace = await env.namespace();
 *   await env.run(website);
 *   env.cutOff("east");
 *   await env.client("west", Website).create({ metadata: { name: "w", namespace }, spec: { image: "web:1" } });
 *   await eventually(() => env.client("west", kinds.ConfigMap).find({ namespace, name: "w" }));
 * });
 * ```
 *
 * @example What eventually says when it gives up
 * ```ts
 * import { eventually } from "./testing.ts";
 *
 * try {
 *   await eventually(() => ({ phase: "Pending" }).phase === "Ready", { timeoutMs: 300, what: "the Website ready" });
 * } catch (err) {
 *   console.log((err as Error).message); // eventually waiting for the Website ready: gave up ...; last value false
 * }
 * ```
 *
 * @module
 */

export * from "./src/testing/mod.ts";

/**
 * The hub's command line as a function, for a binary of your own with your operators compiled in: {@link main} takes
 * the same arguments as `deno task run` (every flag, operator files, `--help`, `--version`, `cleanup`) and the
 * operators to host beside the built-in ones `--operators` selects, and resolves with the process exit code.
 *
 * {@link homeCluster} is the command line's rule for the cluster that holds the hub's own objects (Leases, cluster
 * Secrets, Mirror sources). Operators are written with the package root (`defineOperator`, `defineHandlers`); a
 * program that wants the Hub without the command line uses `"./hub"`.
 *
 * @example A binary of your own: `deno compile --allow-net --allow-read --allow-env --allow-sys=hostname main.ts`
 * ```ts
 * import { main } from "./cli.ts";
 * import { defineOperator } from "./mod.ts";
 *
 * const hello = defineOperator({
 *   name: "hello",
 *   resource: { group: "examples.operator-hub.dev", version: "v1", kind: "Greeting", plural: "greetings" },
 *   verbs: ["patchStatus"],
 *   async reconcile(request, { client }) {
 *     const obj = client.cached(request);
 *     if (obj && !obj.status) await client.patchStatus(obj, { message: `Hello, ${request.name}` });
 *   },
 * });
 * if (import.meta.main) Deno.exit(await main(Deno.args, { operators: [hello] }));
 * ```
 *
 * @example The version, as `--version` prints it
 * ```ts
 * import { main, VERSION } from "./cli.ts";
 *
 * console.log(VERSION); // "0.1.0"
 * const code = await main(["--version"]); // prints the version, starts nothing
 * console.log(code); // 0
 * ```
 *
 * @module
 */

import { main as run } from "./src/cli/main.ts";

export { homeCluster, main, type MainOptions, VERSION } from "./src/cli/main.ts";

// The two types an embedder names beside main() and homeCluster(), re-exported as types only: the operators it passes
// and the cluster access homeCluster() picks from. What they reference is documented where it is declared: the
// operator contract at the package root and "./sdk", cluster access in "./kube".
export type { Operator } from "./src/sdk/mod.ts";
export type { ClusterAccess } from "./src/kube/mod.ts";

// Run as a program (`deno run -A jsr:@operator-hub/hub/cli init DIR ...`), it is the hub's command line itself.
if (import.meta.main) Deno.exit(await run(Deno.args));

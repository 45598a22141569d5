// What a test environment takes and gives besides itself: testEnv's options, env.run's options, and what runs.

import type { Hub } from "../../hub/mod.ts";
import type { Logger, LogLevel } from "../../util/mod.ts";
import type { CrdSource } from "./_env_crds.ts";

/**
 * Options of {@linkcode testEnv}.
 *
 * @example
 * ```ts
 * import { testEnv, type TestEnvOptions } from "../../../testing.ts";
 * import { Website } from "../../../examples/website_resource.ts";
 *
 * const options: TestEnvOptions = {
 *   clusters: ["east", "west"],
 *   crds: [Website, "crds/mirror.yaml"],
 *   startTimeoutMs: 180_000, // a first run builds the binaries
 * };
 * await using env = await testEnv(options);
 * console.log(env.clusters); // ["east", "west"]
 * ```
 */
export interface TestEnvOptions {
  /** Cluster names (lowercase DNS labels). Default `["test"]`. */
  clusters?: readonly string[];
  /** CRDs to install in every cluster: `defineResource` results, CRD files (paths or URLs) or CRD objects. */
  crds?: readonly CrdSource[];
  /** A folder of prebuilt binaries (default `$OPERATOR_HUB_KUBE_BIN`, else built once into the user cache). */
  binaries?: string;
  /** How long starting (each apiserver ready, each CRD served) may take. Default 120 s. */
  startTimeoutMs?: number;
  /** Progress lines (the first build); default stderr. */
  log?: (line: string) => void;
}

/**
 * Options of {@linkcode TestEnv.run}.
 *
 * @example
 * ```ts
 * import type { RunOptions, TestEnv } from "../../../testing.ts";
 * import { website } from "../../../examples/website_operator.ts";
 *
 * declare const env: TestEnv;
 * const namespace = await env.namespace("shop");
 * const options: RunOptions = { clusters: ["west"], namespaces: [namespace], logLevel: "warn" };
 * await using running = await env.run(website, options);
 * ```
 */
export interface RunOptions {
  /** The clusters the operators run on. Default every cluster of the environment. */
  clusters?: readonly string[];
  /** Watch only these namespaces (default all). */
  namespaces?: readonly string[];
  /** The hub's log level. Default "error" (a fault test's expected warnings stay quiet). */
  logLevel?: LogLevel;
  /** The hub's logger (e.g. one whose `write` keeps the lines for the test to read); overrides `logLevel`. */
  logger?: Logger;
  /** How long to wait for the operators' first full list in every cluster. Default 60 s. */
  readyTimeoutMs?: number;
  /**
   * An operator that declared `reads` gets an UndeclaredFieldError when it reads any other field of an object (see
   * HubOptions.checkReads). Default true: what production would read as a silent `undefined` fails the test.
   */
  checkReads?: boolean;
}

/**
 * Operators running in-process (see {@linkcode TestEnv.run}); stopped with the environment or by `stop()`.
 *
 * @example
 * ```ts
 * import type { RunningOperators, TestEnv } from "../../../testing.ts";
 * import { website } from "../../../examples/website_operator.ts";
 *
 * declare const env: TestEnv;
 * const running: RunningOperators = await env.run(website);
 * env.cutOff("east");
 * console.log(running.hub.health().clusters["east"]?.state); // e.g. "unreachable" once the hub notices
 * await running.stop(); // or `await using`, or let the environment stop it
 * ```
 */
export interface RunningOperators extends AsyncDisposable {
  /** The Hub that runs them (its `health()` is what `/status` shows). */
  readonly hub: Hub;
  /** Stops the hub and waits until it has drained. */
  stop(): Promise<void>;
}

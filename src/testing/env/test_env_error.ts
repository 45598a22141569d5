// The error of the test kit: a test environment could not be started, reached, changed or stopped.

/**
 * A test environment could not be started, reached, changed or stopped; the message says which cluster and why.
 *
 * @example
 * ```ts
 * import { type TestEnv, TestEnvError } from "../../../testing.ts";
 * import { kinds } from "../../../mod.ts";
 *
 * declare const env: TestEnv;
 * try {
 *   env.client("north", kinds.ConfigMap);
 * } catch (err) {
 *   if (err instanceof TestEnvError) console.log(err.message); // no cluster "north" in this environment (it has ...)
 * }
 * ```
 */
export class TestEnvError extends Error {
  /** An error whose `message` says what could not be done, why, and the value seen. */
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "TestEnvError";
  }
}

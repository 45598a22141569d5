// The error retrying cannot fix: the controller logs it and does not retry the request.

/**
 * An error that retrying cannot fix: the controller logs it and does not retry the request.
 *
 * @example
 * ```ts
 * import { TerminalError } from "./terminal_error.ts";
 * const err = new TerminalError("spec.size must be positive, got -1");
 * console.log(err.name); // "TerminalError"
 * ```
 */
export class TerminalError extends Error {
  /** Always "TerminalError". */
  override name = "TerminalError";
}

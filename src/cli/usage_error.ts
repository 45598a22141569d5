// A user's mistake on the command line (a bad flag, kubeconfig, file or permission): one line on stderr, exit 2.

/**
 * Thrown by main()'s steps for what the user must fix; main() prints it with `printUsageError` and exits 2.
 *
 * Guarantees: the message is one line naming what is wrong (the step that throws it wrote it as the contract asks).
 */
export class UsageError extends Error {
  /** Always "UsageError". */
  override name = "UsageError";
}

/** Prints `operator-hub: error: MESSAGE` on stderr and answers the exit code of a usage error, 2. */
export function printUsageError(message: string): number {
  console.error(`operator-hub: error: ${message}`);
  return 2;
}

// The error of the test kit: a test environment could not be started, reached, changed or stopped.

/** A test environment could not be started, reached, changed or stopped; the message says which cluster and why. */
export class TestEnvError extends Error {
  /** An error whose `message` says what could not be done, why, and the value seen. */
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "TestEnvError";
  }
}

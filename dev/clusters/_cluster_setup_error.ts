// The error of the local-cluster manager: a cluster could not be started, reached or stopped.

/** A cluster could not be started, reached or stopped. */
export class ClusterSetupError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "ClusterSetupError";
  }
}

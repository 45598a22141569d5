// The Hub's background tasks (daemons) stopping now, per cluster, so a cluster's next owner can wait for them.

import type { Logger } from "../../util/mod.ts";
import type { EngagedCluster } from "./engaged_cluster.ts";

/**
 * Per cluster, the last stop of its background tasks still under way.
 *
 * Guarantees: `stop` never waits and never throws (a failed stop is logged); `stopped(name)` settles once the last
 * stop of `name` ended (its tasks ended or their grace period passed), at once when none is under way.
 */
export class BackgroundStops {
  readonly #stops = new Map<string, Promise<void>>();
  readonly #logger: Logger;

  constructor(logger: Logger) {
    this.#logger = logger;
  }

  /** Stops a cluster's background tasks without waiting (each is waited for up to its grace period, then logged). */
  stop(cluster: Pick<EngagedCluster, "name" | "stopBackground">): void {
    const name = cluster.name;
    const stopped: Promise<void> = cluster.stopBackground().catch((err) => {
      this.#logger.error("stopping background tasks failed", { cluster: name, error: err });
    }).finally(() => {
      if (this.#stops.get(name) === stopped) this.#stops.delete(name);
    });
    this.#stops.set(name, stopped);
  }

  /** Settles once the background tasks of `name` stopped last ended, or their grace period passed; at once if none. */
  stopped(name: string): Promise<void> {
    return this.#stops.get(name) ?? Promise.resolve();
  }
}

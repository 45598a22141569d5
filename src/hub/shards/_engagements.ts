// Which registered clusters are engaged in the Hub and which of them reconcile there, with their teardowns tracked.

import type { ClusterAccess } from "../../kube/mod.ts";
import { errorText, type Logger } from "../../util/mod.ts";
import type { ClusterRegistration } from "../hub.ts";
import type { EngageTarget } from "../providers/mod.ts";

/** What the coordinator drives: the Hub (engage/disengage/hold, and pause/resume for `--shard-warm`). */
export interface ShardTarget extends EngageTarget {
  /** Stops reconciling in an engaged cluster (queue dropped, in-flight reconciles cancelled); watches go on. */
  pause(name: string): void;
  /** Reconciles in an engaged cluster again, queueing everything cached. */
  resume(name: string): void;
  /** Settles once the background tasks (daemons) stopped in `name` by its last disengage or pause ended (bounded). */
  backgroundStopped?(name: string): Promise<void>;
}

/**
 * One replica's clusters in its ShardTarget: engaged (watched) ones, and the owned ones reconciling among them.
 *
 * Guarantees:
 * - without `warm`, a cluster is engaged only while it reconciles here: `startReconciling` engages it,
 *   `stopReconciling` disengages it; with `warm`, every registered cluster is engaged, paused until it reconciles
 *   here, and `stopReconciling` pauses it again;
 * - `stopReconciling` stops synchronously (Hub.disengage aborts the cluster and closes its client before its first
 *   await; Hub.pause cancels in-flight reconciles); the rest of the teardown (watches winding down) goes on without
 *   holding anything up, a failure of it is logged, and `disengageAll` settles only once every teardown did.
 */
export class Engagements {
  readonly #warm: boolean;
  readonly #log: Logger;
  #target: ShardTarget | undefined;
  /** Clusters engaged in the target: owned ones, or every registered one with `warm`. */
  readonly #engaged = new Set<string>();
  /** Clusters reconciling in the target now. */
  readonly #reconciling = new Set<string>();
  readonly #windingDown = new Set<Promise<void>>();

  constructor(warm: boolean, logger: Logger) {
    this.#warm = warm;
    this.#log = logger;
  }

  /** The target set by `connect`, if any. */
  get target(): ShardTarget | undefined {
    return this.#target;
  }

  /** Teardowns still winding down. */
  get teardowns(): number {
    return this.#windingDown.size;
  }

  connect(target: ShardTarget): void {
    this.#target = target;
  }

  /** True while `cluster` reconciles in the target. */
  isReconciling(cluster: string): boolean {
    return this.#reconciling.has(cluster);
  }

  /**
   * A cluster was registered (`again`: it was before): with `warm`, engaged (paused unless it reconciles here);
   * without, re-engaged with its new endpoint only if this replica has it engaged.
   */
  async register(
    name: string,
    access: ClusterAccess,
    registration: ClusterRegistration,
    again: boolean,
  ): Promise<void> {
    const t = this.#target!;
    if (this.#warm) {
      if (!this.#reconciling.has(name)) t.pause(name);
      this.#engaged.add(name);
      await t.engage(name, access, registration);
    } else if (again && this.#engaged.has(name)) {
      await t.engage(name, access, registration); // new endpoint: the owner re-engages with it
    }
  }

  /** A cluster was unregistered: disengaged in the target if it was engaged. */
  async disengage(name: string): Promise<void> {
    if (this.#engaged.delete(name)) await this.#target!.disengage(name);
  }

  /** Reconciles in `cluster`: resumed with `warm`, else engaged; settles once the target engaged it. */
  async startReconciling(cluster: string, access: ClusterAccess, registration: ClusterRegistration): Promise<void> {
    this.#reconciling.add(cluster);
    if (this.#warm) {
      this.#target!.resume(cluster);
    } else {
      this.#engaged.add(cluster);
      await this.#target!.engage(cluster, access, registration);
    }
  }

  /** Stops reconciling in `cluster` before it returns; its teardown is tracked until it settles. */
  stopReconciling(cluster: string): void {
    this.#windDown(this.#stop(cluster));
  }

  /** Disengages every engaged cluster, then waits for every teardown. */
  async disengageAll(): Promise<void> {
    await Promise.all([...this.#engaged].map((c) => this.#target!.disengage(c)));
    this.#engaged.clear();
    await Promise.all([...this.#windingDown]);
  }

  /** The synchronous stop; the promise settles once it is all gone. */
  #stop(cluster: string): Promise<void> {
    this.#reconciling.delete(cluster);
    if (this.#warm) {
      this.#target!.pause(cluster);
      return Promise.resolve();
    }
    if (!this.#engaged.delete(cluster)) return Promise.resolve();
    return this.#target!.disengage(cluster);
  }

  /**
   * Tracks a cluster's teardown (its watches winding down after the synchronous stop) without holding up fence work:
   * a slow teardown never blocks other hand-overs.
   */
  #windDown(p: Promise<void>): void {
    const tracked: Promise<void> = p.catch((err) =>
      this.#log.warn("cluster teardown failed", { error: errorText(err) })
    )
      .finally(() => this.#windingDown.delete(tracked));
    this.#windingDown.add(tracked);
  }
}

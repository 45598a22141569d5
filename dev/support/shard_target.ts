// Test fixtures of the shard tests: a ShardTarget that records its calls, and ClusterAccess to a host that never answers.

import type { ClusterAccess } from "../../src/kube/mod.ts";
import type { RegistrationProblem } from "../../hub.ts";

/** ClusterAccess named `name` whose server does not resolve and whose credentials are never asked for. */
export function unreachableAccess(name: string): ClusterAccess {
  return {
    name,
    server: `https://${name}.invalid:6443`,
    source: "test",
    auth: () => Promise.reject(new Error("unused")),
  };
}

/**
 * A shard target (the ShardTarget shape of src/hub/shards/, matched structurally: that interface is private to its
 * folder) that records every call in order and which clusters are engaged. With `deferTeardowns`, `disengage`
 * settles only when the test calls `finish(name)`; otherwise at once.
 */
export class RecordingTarget {
  readonly calls: string[] = [];
  readonly engaged = new Set<string>();
  readonly #defer: boolean;
  readonly #teardowns = new Map<string, { resolve: () => void; reject: (e: Error) => void }>();

  constructor(options: { deferTeardowns?: boolean } = {}) {
    this.#defer = options.deferTeardowns === true;
  }

  engage(name: string): Promise<void> {
    this.calls.push(`engage ${name}`);
    this.engaged.add(name);
    return Promise.resolve();
  }
  disengage(name: string): Promise<void> {
    this.calls.push(`disengage ${name}`);
    this.engaged.delete(name);
    if (!this.#defer) return Promise.resolve();
    return new Promise((resolve, reject) => this.#teardowns.set(name, { resolve, reject }));
  }
  hold(name: string, _problem: RegistrationProblem | undefined): void {
    this.calls.push(`hold ${name}`);
  }
  pause(name: string): void {
    this.calls.push(`pause ${name}`);
  }
  resume(name: string): void {
    this.calls.push(`resume ${name}`);
  }
  /** Settles the deferred teardown of `name`: resolved, or rejected with `err`. */
  finish(name: string, err?: Error): void {
    const t = this.#teardowns.get(name);
    if (!t) throw new Error(`no teardown of ${name} was asked for`);
    if (err) t.reject(err);
    else t.resolve();
  }
}

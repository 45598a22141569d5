// The clusters whose admission calls the hub answers: those the registry engages, so a path naming any other cluster
// is a 404 and never a metric label.

import type { EngageTarget } from "../providers/mod.ts";

/**
 * The names of the clusters the hub serves, as the registry engages and disengages them.
 *
 * Guarantees: a name is served from the moment the registry starts engaging it (before this replica knows whether it
 * owns it: with `--shard` every replica answers every registered cluster's calls) until its disengage has settled;
 * `onForget` listeners run then (the webhook series of the name are removed). A name held (a collision, a broken
 * kubeconfig) or only offered is never served.
 */
export class ServedClusters {
  readonly #names = new Set<string>();
  readonly #onForget: ((name: string) => void)[] = [];

  /** Whether calls naming `name` are answered. */
  has(name: string): boolean {
    return this.#names.has(name);
  }

  /** The names served now. */
  names(): string[] {
    return [...this.#names];
  }

  /** Serves `name` from now on. */
  add(name: string): void {
    this.#names.add(name);
  }

  /** Stops serving `name` and tells every `onForget` listener. */
  delete(name: string): void {
    if (!this.#names.delete(name)) return;
    for (const f of this.#onForget) f(name);
  }

  /** Calls `f` with each name no longer served. */
  onForget(f: (name: string) => void): void {
    this.#onForget.push(f);
  }

  /** `target`, with every name it is asked to engage served, and every name it disengaged forgotten. */
  tracking(target: EngageTarget): EngageTarget {
    return {
      engage: (name, access, registration) => {
        this.add(name);
        return target.engage(name, access, registration);
      },
      disengage: async (name) => {
        try {
          await target.disengage(name);
        } finally {
          this.delete(name);
        }
      },
      hold: (name, problem) => target.hold(name, problem),
      ...(target.showProviders ? { showProviders: (read) => target.showProviders!(read) } : {}),
      ...(target.removed ? { removed: (name, access) => target.removed!(name, access) } : {}),
    };
  }
}

// Every source's offers and the names they claim, resolved to what each name should be: served, held or nothing.

import type { ClusterAccess } from "../../kube/mod.ts";
import type { RegistrationProblem } from "../hub_health.ts";
import type { ClusterOffer, ProviderName } from "./registry.ts";

/** One source (a file, a Secret) and everything it offers now. */
export interface Source {
  provider: ProviderName;
  source: string;
  offers: Map<string, ClusterOffer>;
}

/** What one name should be now. */
export type Desired =
  | { kind: "none" }
  | { kind: "hold"; problem: RegistrationProblem }
  | { kind: "serve"; provider: ProviderName; source: string; offer: ClusterOffer & { access: ClusterAccess } };

/** Which names the registry serves: `all` or those `--clusters` selected, and how a user registers one. */
export interface Selection {
  names: "all" | ReadonlySet<string>;
  /** Appended to "selected but not registered" errors. */
  howToRegister?: string;
}

/**
 * The offers of every source, by source and by the names they claim.
 *
 * Guarantees: a name claimed by more than one source, or defined twice in one source, is held with an error naming
 * every source (or the source), never served; what `resolve` answers does not depend on the order sources offered in.
 */
export class Offers {
  /** `provider\0source` → the source. */
  readonly #sources = new Map<string, Source>();
  /** name → keys of the sources that offer it. */
  readonly #claims = new Map<string, Set<string>>();

  /**
   * Replaces everything `source` of `provider` offers; answers the names whose resolution may have changed (offered
   * or withdrawn, or whose offer changed in digest, error or usability).
   */
  offer(provider: ProviderName, source: string, offers: readonly ClusterOffer[]): string[] {
    const key = `${provider}\u0000${source}`;
    const before = this.#sources.get(key);
    const next = new Map<string, ClusterOffer>();
    const doubled = new Set<string>();
    for (const o of offers) {
      if (next.has(o.name)) doubled.add(o.name);
      next.set(o.name, o);
    }
    for (const name of doubled) {
      next.set(name, { ...next.get(name)!, access: undefined, error: `"${name}" is defined twice in ${source}` });
    }
    if (next.size === 0) this.#sources.delete(key);
    else this.#sources.set(key, { provider, source, offers: next });
    const changed: string[] = [];
    for (const name of before?.offers.keys() ?? []) {
      if (!next.has(name) && this.#unclaim(name, key)) changed.push(name);
    }
    for (const [name, o] of next) {
      const old = before?.offers.get(name);
      this.#claim(name, key);
      if (
        !old || old.endpointDigest !== o.endpointDigest || old.credentialsDigest !== o.credentialsDigest ||
        old.error !== o.error || !old.access !== !o.access
      ) changed.push(name);
    }
    return changed;
  }

  /** Every name some source offers, sorted. */
  names(): string[] {
    return [...this.#claims.keys()].sort();
  }

  /** How many sources offer `name`. */
  claims(name: string): number {
    return this.#claims.get(name)?.size ?? 0;
  }

  /** Every source that offers something. */
  sources(): IterableIterator<Source> {
    return this.#sources.values();
  }

  /** What `name` should be now, given the selection. */
  resolve(name: string, selection: Selection): Desired {
    const selected = selection.names === "all" || selection.names.has(name);
    if (!selected) return { kind: "none" };
    const keys = [...this.#claims.get(name) ?? []].sort();
    if (keys.length === 0) {
      if (selection.names === "all") return { kind: "none" };
      return {
        kind: "hold",
        problem: {
          error: `cluster "${name}" is selected by --clusters but no provider registers it yet${
            selection.howToRegister ? `; ${selection.howToRegister}` : ""
          }`,
        },
      };
    }
    const sources = keys.map((k) => this.#sources.get(k)!);
    if (sources.length > 1) {
      const where = sources.map((s) => `${s.provider} ${s.source}`).join(", ");
      return {
        kind: "hold",
        problem: {
          error: `name collision: cluster "${name}" is registered ${sources.length} times (${where}); ` +
            `none of them is served until all but one are renamed or removed`,
        },
      };
    }
    const s = sources[0];
    const offer = s.offers.get(name)!;
    if (!offer.access || offer.error) {
      return {
        kind: "hold",
        problem: { provider: s.provider, error: offer.error ?? `cluster "${name}" from ${s.source} is not usable` },
      };
    }
    return { kind: "serve", provider: s.provider, source: s.source, offer: { ...offer, access: offer.access } };
  }

  #claim(name: string, key: string): void {
    let set = this.#claims.get(name);
    if (!set) this.#claims.set(name, set = new Set());
    set.add(key);
  }

  #unclaim(name: string, key: string): boolean {
    const set = this.#claims.get(name);
    const had = set?.delete(key) ?? false;
    if (set?.size === 0) this.#claims.delete(name);
    return had;
  }
}

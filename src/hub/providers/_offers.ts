// Every source's offers and the names they claim, resolved to what each name should be: served, held or nothing.

import { type ClusterAccess, IN_CLUSTER } from "../../kube/mod.ts";
import type { RegistrationProblem } from "../health/hub_health.ts";
import type { ClusterOffer, ProviderName } from "./cluster_offer.ts";

/** One source (a file, a Secret) and everything it offers now. */
export interface Source {
  provider: ProviderName;
  source: string;
  offers: Map<string, ClusterOffer>;
  /** Defined on the command line (`--kubeconfig`, $KUBECONFIG, `in-cluster`): its names are reserved. */
  trusted: boolean;
}

/** Names no untrusted source may take even when the command line does not define them now. */
export const RESERVED_NAMES: ReadonlySet<string> = new Set([IN_CLUSTER]);

/** A name some source offers but may not have, or shares with another source of the same trust. */
export interface NameCollision {
  name: string;
  /** `reserved`: an untrusted source offers a name the command line defines; `duplicate`: two sources of one trust. */
  reason: "reserved" | "duplicate";
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
 * Guarantees:
 * - a name the command line defines (a trusted source offers it, or it is `in-cluster`) is reserved: it resolves
 *   among the trusted sources only, and an untrusted source's offer of it is ignored (shown as a `reserved`
 *   collision), so a Secret or a dropped file can never disengage or replace a command-line cluster;
 * - otherwise, among untrusted sources, the first to claim a name keeps it: a later Secret or dropped file offering the
 *   same name is ignored (shown as a `duplicate` collision, with an error naming the source that has it), so it can
 *   never disengage a cluster already registered; once the first withdraws, the next in claim order gets it;
 * - a name two trusted sources define, or one source defines twice, is held with an error naming every source (or
 *   the source), never served: what the command line says does not depend on which file was read first.
 *
 * Assumptions: claim order is the order offers arrived in this process; after a restart it is the order the providers
 * read their sources in (the command line's files, then the folder, then the Secrets).
 */
export class Offers {
  /** `provider\0source` → the source. */
  readonly #sources = new Map<string, Source>();
  /** name → keys of the sources that offer it, in claim order (a Set keeps insertion order). */
  readonly #claims = new Map<string, Set<string>>();

  /**
   * Replaces everything `source` of `provider` offers; answers the names whose resolution may have changed (offered
   * or withdrawn, or whose offer changed in digest, error or usability).
   */
  offer(
    provider: ProviderName,
    source: string,
    offers: readonly ClusterOffer[],
    trusted: boolean = provider === "flag",
  ): string[] {
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
    else this.#sources.set(key, { provider, source, offers: next, trusted });
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

  /** Whether a trusted source (the command line's) offers `name`. */
  trusted(name: string): boolean {
    return [...this.#claims.get(name) ?? []].some((k) => this.#sources.get(k)!.trusted);
  }

  /** What `source` of `provider` offers now, if anything. */
  source(provider: ProviderName, source: string): Source | undefined {
    return this.#sources.get(`${provider}\u0000${source}`);
  }

  /** Every source that offers something. */
  sources(): IterableIterator<Source> {
    return this.#sources.values();
  }

  /** What `name` should be now, given the selection. */
  resolve(name: string, selection: Selection): Desired {
    const selected = selection.names === "all" || selection.names.has(name);
    if (!selected) return { kind: "none" };
    const keys = [...this.#claims.get(name) ?? []];
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
    const all = keys.map((k) => this.#sources.get(k)!);
    const reserved = RESERVED_NAMES.has(name) || all.some((s) => s.trusted);
    // Untrusted sources only: the first claimant keeps the name (see the class's guarantees).
    const sources = reserved
      ? all.filter((s) => s.trusted).sort((a, b) => sourceKey(a).localeCompare(sourceKey(b)))
      : all.slice(0, 1);
    if (sources.length === 0) {
      // Only untrusted sources claim a reserved name the command line does not serve now: nobody gets it.
      if (selection.names === "all") return { kind: "none" };
      return { kind: "hold", problem: { error: this.reservedError(name, all[0])! } };
    }
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
        problem: {
          provider: s.provider,
          error: offer.error ?? `cluster "${name}" from ${s.source} is not usable`,
          ...(offer.condition ? { condition: offer.condition } : {}),
        },
      };
    }
    return { kind: "serve", provider: s.provider, source: s.source, offer: { ...offer, access: offer.access } };
  }

  /**
   * Why `source` may not have `name` (the command line defines it), or undefined when it may. One line naming the
   * sources, never content.
   */
  reservedError(name: string, source: Source): string | undefined {
    if (source.trusted) return undefined;
    const owners = [...this.#claims.get(name) ?? []].map((k) => this.#sources.get(k)!).filter((s) => s.trusted);
    if (owners.length === 0 && !RESERVED_NAMES.has(name)) return undefined;
    const owner = owners.length > 0
      ? `the command line defines it (${owners.map((s) => `${s.provider} ${s.source}`).join(", ")})`
      : `"${IN_CLUSTER}" names the hub's own pod cluster`;
    return `name collision: cluster name "${name}" is reserved: ${owner}; ${source.provider} ${source.source} ` +
      `may not take it and is ignored until renamed`;
  }

  /**
   * Why `source` may not have `name` because an earlier untrusted source registered it, or undefined when it may. One
   * line naming both sources, never content.
   */
  shadowedError(name: string, source: Source): string | undefined {
    if (source.trusted || RESERVED_NAMES.has(name) || this.trusted(name)) return undefined;
    const first = this.#sources.get(this.#claims.get(name)?.values().next().value ?? "");
    if (!first || first === source) return undefined;
    return `name collision: cluster "${name}" is already registered by ${first.provider} ${first.source}; ` +
      `${source.provider} ${source.source} is ignored until renamed or until that one goes`;
  }

  /** Every name that is contested now: offered against a reservation, or by several sources of one trust. */
  collisions(): NameCollision[] {
    const out: NameCollision[] = [];
    for (const [name, keys] of this.#claims) {
      const all = [...keys].map((k) => this.#sources.get(k)!);
      const trusted = all.filter((s) => s.trusted).length;
      const reserved = RESERVED_NAMES.has(name) || trusted > 0;
      if (reserved && trusted < all.length) out.push({ name, reason: "reserved" });
      if ((reserved ? trusted : all.length) > 1) out.push({ name, reason: "duplicate" });
    }
    return out.sort((a, b) => a.name.localeCompare(b.name) || a.reason.localeCompare(b.reason));
  }

  #claim(name: string, key: string): void {
    // A source already claiming the name keeps its place in the claim order.
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

function sourceKey(s: Source): string {
  return `${s.provider} ${s.source}`;
}

// The `providers` section of /status: each provider's watch, the clusters it serves, and its sources in trouble.

import { oneLine } from "../../util/mod.ts";
import type { ProviderHealth } from "../health/cluster_health.ts";
import type { Desired, Offers } from "./_offers.ts";
import type { ProviderName, ProviderWatch } from "./cluster_offer.ts";

/** A source that offers nothing because it cannot be used at all (it does not parse, it cannot be read). */
export interface UnusableSource {
  provider: ProviderName;
  source: string;
  error: string;
}

/** What the section is built from. */
export interface ProviderHealthInputs {
  /** The order entries are listed in (PROVIDERS). */
  order: readonly ProviderName[];
  /** Each attached provider's own watch; providers not here are left out. */
  watches: ReadonlyMap<ProviderName, () => ProviderWatch>;
  /** The provider of every name served now. */
  served: Iterable<{ provider: ProviderName }>;
  unusable: Iterable<UnusableSource>;
  offers: Offers;
  /** What a name offered by several sources resolves to (a collision is held). */
  resolve(name: string): Desired;
}

/**
 * Every attached provider's health, in `order`: its watch, the clusters it serves, and each of its sources
 * that cannot be used (unusable sources, broken offers, names it shares with another source), sorted by source and
 * cluster. Messages name sources, never content.
 */
export function providerHealth(inputs: ProviderHealthInputs): Record<string, ProviderHealth> {
  const out: Record<string, ProviderHealth> = {};
  const entry = (p: ProviderName) => out[p];
  for (const p of inputs.order) {
    const w = inputs.watches.get(p);
    if (w) out[p] = { ...w(), clusters: 0, errors: [] };
  }
  for (const s of inputs.served) if (entry(s.provider)) entry(s.provider).clusters++;
  for (const u of inputs.unusable) entry(u.provider)?.errors.push({ source: u.source, error: u.error });
  for (const s of inputs.offers.sources()) {
    const e = entry(s.provider);
    if (!e) continue;
    for (const [name, o] of s.offers) {
      const taken = inputs.offers.reservedError(name, s) ?? inputs.offers.shadowedError(name, s);
      if (taken) {
        e.errors.push({ source: s.source, cluster: name, error: taken });
      } else if (o.error || !o.access) {
        e.errors.push({ source: s.source, cluster: name, error: o.error ?? `cluster "${name}" is not usable` });
      } else if (inputs.offers.claims(name) > 1) {
        const want = inputs.resolve(name);
        if (want.kind === "hold") e.errors.push({ source: s.source, cluster: name, error: want.problem.error });
      }
    }
  }
  for (const e of Object.values(out)) {
    for (const x of e.errors) x.error = oneLine(x.error);
    e.errors.sort((a, b) => a.source.localeCompare(b.source) || (a.cluster ?? "").localeCompare(b.cluster ?? ""));
  }
  return out;
}

/** Why an offer is not served, as `hub_cluster_offers_refused` counts it: a bounded set, never a name. */
export const REFUSAL_REASONS = ["reserved", "duplicate", "invalid", "unreadable"] as const;

/** One of {@linkcode REFUSAL_REASONS}. */
export type RefusalReason = typeof REFUSAL_REASONS[number];

/**
 * The offers each provider makes now that are not served, by reason: `reserved` (a name the command line defines),
 * `duplicate` (a name an earlier source of the same trust has), `invalid` (its kubeconfig or context cannot be used),
 * `unreadable` (the source itself cannot be read or parsed). Every provider of `order` and every reason is present
 * (zero when none), so the series are a fixed set whatever is offered.
 */
export function refusedOffers(
  order: readonly ProviderName[],
  offers: Offers,
  unusable: Iterable<UnusableSource>,
): Map<ProviderName, Map<RefusalReason, number>> {
  const out = new Map(order.map((p) => [p, new Map(REFUSAL_REASONS.map((r) => [r, 0]))]));
  const add = (p: ProviderName, r: RefusalReason) => {
    const m = out.get(p);
    if (m) m.set(r, m.get(r)! + 1);
  };
  for (const u of unusable) add(u.provider, "unreadable");
  for (const s of offers.sources()) {
    for (const [name, o] of s.offers) {
      if (offers.reservedError(name, s)) add(s.provider, "reserved");
      else if (offers.shadowedError(name, s)) add(s.provider, "duplicate");
      else if (o.error || !o.access) add(s.provider, "invalid");
    }
  }
  return out;
}

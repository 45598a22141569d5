// The `providers` section of /status: each provider's watch, the clusters it serves, and its sources in trouble.

import { oneLine } from "../../util/mod.ts";
import type { ProviderHealth } from "../cluster_health.ts";
import type { Desired, Offers } from "./_offers.ts";
import type { ProviderName, ProviderWatch } from "./registry.ts";

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

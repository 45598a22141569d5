// The registry's own series: clusters served by provider, contested names, refused offers by provider and reason.

import * as prom from "../../util/prometheus.ts";
import type { Offers } from "./_offers.ts";
import { refusedOffers, type UnusableSource } from "./_provider_health.ts";
import { type ProviderName, PROVIDERS } from "./cluster_offer.ts";

/** What the series are counted from, read at each scrape. */
export interface RegistrySeriesSources {
  served: ReadonlyMap<string, { provider: ProviderName }>;
  offers: Offers;
  unusable: ReadonlyMap<string, UnusableSource>;
}

/**
 * Adds `hub_clusters_registered{provider}`, `hub_cluster_name_collisions{reason}` and
 * `hub_cluster_offers_refused{provider,reason}` to `registry`.
 *
 * Guarantees: every label value comes from a fixed set (PROVIDERS, the collision and refusal reasons), never from a
 * cluster's name or a source, so the number of series is the same whatever is offered (5 + 2 + 20).
 */
export function registerRegistryMetrics(registry: prom.MetricRegistry, sources: RegistrySeriesSources): void {
  const { served, offers, unusable } = sources;
  new prom.Gauge({
    name: "hub_cluster_offers_refused",
    help: "Offers each provider makes now that are not served, by reason: reserved (a name the command line " +
      "defines), duplicate (a name an earlier source has), invalid (its kubeconfig or context cannot be used), " +
      "unreadable (the source cannot be read or parsed)",
    labelNames: ["provider", "reason"],
    registers: [registry],
    collect() {
      for (const [provider, byReason] of refusedOffers(PROVIDERS, offers, unusable.values())) {
        for (const [reason, n] of byReason) this.set({ provider, reason }, n);
      }
    },
  });
  new prom.Gauge({
    name: "hub_cluster_name_collisions",
    help: "Cluster names contested now: reserved (a Secret or dropped file offers a name the command line defines; " +
      "the command line's cluster keeps serving) or duplicate (two sources of one trust; the first untrusted one keeps it)",
    labelNames: ["reason"],
    registers: [registry],
    collect() {
      const counts = new Map<string, number>([["reserved", 0], ["duplicate", 0]]);
      for (const c of offers.collisions()) counts.set(c.reason, counts.get(c.reason)! + 1);
      for (const [reason, n] of counts) this.set({ reason }, n);
    },
  });
  new prom.Gauge({
    name: "hub_clusters_registered",
    help: "Clusters engaged, by the provider that registered them (flag, folder, secret, cluster-profile, cluster-api)",
    labelNames: ["provider"],
    registers: [registry],
    collect() {
      const counts = new Map<string, number>(PROVIDERS.map((p) => [p, 0]));
      for (const s of served.values()) counts.set(s.provider, (counts.get(s.provider) ?? 0) + 1);
      for (const [provider, n] of counts) this.set({ provider }, n);
    },
  });
}

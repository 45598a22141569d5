// Unit tests of the `providers` section of /status: counts, sources in trouble, order and sorting (pure).
import assert from "node:assert/strict";
import type { ClusterAccess } from "../../kube/mod.ts";
import { Offers, type Selection } from "./_offers.ts";
import { providerHealth, type ProviderHealthInputs, REFUSAL_REASONS, refusedOffers } from "./_provider_health.ts";
import { type ClusterOffer, type ProviderName, PROVIDERS, type ProviderWatch } from "./cluster_offer.ts";

function offer(name: string, over: Partial<ClusterOffer> = {}): ClusterOffer {
  const access = { name, server: "https://127.0.0.1:1", source: "test" } as unknown as ClusterAccess;
  return { name, access, endpointDigest: "e1", credentialsDigest: "c1", ...over };
}

const watching = (watches: string[]): () => ProviderWatch => () => ({
  state: "watching",
  synced: true,
  watches,
  lastError: null,
});

function inputs(over: Partial<ProviderHealthInputs> & { offers: Offers }): ProviderHealthInputs {
  const selection: Selection = { names: "all" };
  return {
    order: PROVIDERS,
    watches: new Map(),
    served: [],
    unusable: [],
    resolve: (name) => over.offers.resolve(name, selection),
    ...over,
  };
}

Deno.test("providerHealth() lists only attached providers, in the given order, each with its watch and served count", () => {
  const watches = new Map<ProviderName, () => ProviderWatch>([
    ["secret", watching(["hub/clusters"])],
    ["folder", watching(["/c"])],
  ]);
  const served = [{ provider: "folder" as const }, { provider: "folder" as const }, { provider: "flag" as const }];
  const h = providerHealth(inputs({ watches, served, offers: new Offers() }));
  assert.deepEqual(Object.keys(h), ["folder", "secret"]);
  assert.deepEqual(h.folder, {
    state: "watching",
    synced: true,
    watches: ["/c"],
    lastError: null,
    clusters: 2,
    errors: [],
  });
  assert.equal(h.secret.clusters, 0);
});

Deno.test("providerHealth() names each source in trouble: unusable, broken offers and shared names, sorted by source and cluster", () => {
  const offers = new Offers();
  offers.offer("folder", "/c/b.yaml", [offer("shared")]);
  offers.offer("folder", "/c/a.yaml", [offer("zeta", { access: undefined }), offer("alpha", { error: "no server" })]);
  offers.offer("secret", "hub/shared", [offer("shared")]);
  const h = providerHealth(inputs({
    watches: new Map([["folder", watching(["/c"])], ["secret", watching(["hub"])]]),
    unusable: [{ provider: "folder", source: "/c/0-broken.yaml", error: "does not parse" }],
    offers,
  }));
  assert.deepEqual(h.folder.errors.map((e) => `${e.source} ${e.cluster ?? "-"}`), [
    "/c/0-broken.yaml -",
    "/c/a.yaml alpha",
    "/c/a.yaml zeta",
  ], "the source that registered the shared name first keeps it and shows no error");
  assert.equal(h.folder.errors[1].error, "no server");
  assert.equal(h.folder.errors[2].error, `cluster "zeta" is not usable`);
  assert.deepEqual(h.secret.errors.map((e) => `${e.source} ${e.cluster}`), ["hub/shared shared"]);
  assert.match(h.secret.errors[0].error, /already registered by folder \/c\/b.yaml; secret hub\/shared is ignored/);
});

Deno.test("providerHealth() leaves out the troubles of providers not attached", () => {
  const offers = new Offers();
  offers.offer("secret", "hub/a", [offer("a", { access: undefined })]);
  const h = providerHealth(inputs({
    watches: new Map([["folder", watching(["/c"])]]),
    unusable: [{ provider: "secret", source: "hub/b", error: "cannot read" }],
    served: [{ provider: "secret" }],
    offers,
  }));
  assert.deepEqual(Object.keys(h), ["folder"]);
  assert.deepEqual(h.folder.errors, []);
  assert.equal(h.folder.clusters, 0);
});

Deno.test("refusedOffers() counts each provider's refused offers by reason, with every provider and reason present", () => {
  const offers = new Offers();
  offers.offer("flag", "/k.yaml", [offer("prod")]);
  offers.offer("secret", "hub/prod", [offer("prod")]);
  offers.offer("folder", "/c/a.yaml", [offer("a")]);
  offers.offer("secret", "hub/a", [offer("a")]);
  for (let i = 0; i < 1000; i++) {
    offers.offer("secret", `hub/bad-${i}`, [offer(`bad-${i}`, { access: undefined, error: "no context" })]);
  }
  offers.offer("secret", "hub/ok", [offer("ok")]);
  const counts = refusedOffers(PROVIDERS, offers, [{ provider: "folder", source: "/c/x.yaml", error: "not YAML" }]);
  assert.deepEqual([...counts.keys()], [...PROVIDERS]);
  for (const m of counts.values()) assert.deepEqual([...m.keys()], [...REFUSAL_REASONS]);
  assert.deepEqual(Object.fromEntries(counts.get("secret")!), {
    reserved: 1,
    duplicate: 1,
    invalid: 1000,
    unreadable: 0,
  });
  assert.deepEqual(Object.fromEntries(counts.get("folder")!), { reserved: 0, duplicate: 0, invalid: 0, unreadable: 1 });
  assert.deepEqual(Object.fromEntries(counts.get("flag")!), { reserved: 0, duplicate: 0, invalid: 0, unreadable: 0 });
});

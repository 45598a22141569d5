// Unit tests of the per-provider name prefixes: parsing `PROVIDER=PREFIX`, and the registry applying them where offers
// enter, with the reserved-name and duplicate rules on the prefixed names (virtual time).

import assert from "node:assert/strict";
import * as prometheus from "../../util/prometheus.ts";
import type { ClusterAccess, ClusterAuth } from "../../kube/mod.ts";
import { Logger, VirtualClock } from "../../util/mod.ts";
import type { ClusterRegistration, RegistrationProblem } from "../health/hub_health.ts";
import { NamePrefixError, parseNamePrefixes, prefixedName, prefixProblem } from "./name_prefixes.ts";
import type { ClusterOffer } from "./cluster_offer.ts";
import { ClusterRegistry, type EngageTarget } from "./registry.ts";

class RecordingTarget implements EngageTarget {
  readonly calls: string[] = [];
  readonly held = new Map<string, RegistrationProblem>();
  engage(name: string, _access: ClusterAccess, r: ClusterRegistration): Promise<void> {
    this.calls.push(`engage ${name} ${r.provider}`);
    return Promise.resolve();
  }
  disengage(name: string): Promise<void> {
    this.calls.push(`disengage ${name}`);
    return Promise.resolve();
  }
  hold(name: string, problem: RegistrationProblem | undefined): void {
    if (problem) this.held.set(name, problem);
    else this.held.delete(name);
  }
}

function offer(name: string, token = "t1", endpoint = "e1"): ClusterOffer {
  const auth: ClusterAuth = { headers: { Authorization: `Bearer ${token}` }, insecureSkipTlsVerify: false };
  const access: ClusterAccess = {
    name,
    server: "https://127.0.0.1:1",
    source: "test",
    auth: () => Promise.resolve(auth),
  };
  return { name, access, endpointDigest: endpoint, credentialsDigest: token };
}

const logger = new Logger({ level: "error", format: "json" });

function registry(prefixes: Parameters<typeof parseNamePrefixes>[0]) {
  const target = new RecordingTarget();
  const clock = new VirtualClock();
  const r = new ClusterRegistry({
    selection: "all",
    prefixes: parseNamePrefixes(prefixes),
    clock,
    logger,
  });
  r.connect(target);
  for (const p of ["folder", "secret", "cluster-api"] as const) {
    r.attach(p, () => ({ state: "watching", synced: true, watches: [p], lastError: null }));
  }
  const prom = new prometheus.MetricRegistry();
  r.registerMetrics(prom);
  return { r, target, prom, clock };
}

Deno.test("parseNamePrefixes() reads PROVIDER=PREFIX entries for every prefixable provider", () => {
  assert.deepEqual(parseNamePrefixes(["secret=sec#", "cluster-api=capi/", "cluster-profile=inv:", "folder=f-"]), {
    secret: "sec#",
    "cluster-api": "capi/",
    "cluster-profile": "inv:",
    folder: "f-",
  });
  assert.deepEqual(parseNamePrefixes([]), {});
  assert.deepEqual(parseNamePrefixes(["secret=a.", "secret=a."]), { secret: "a." }, "the same entry twice is fine");
});

Deno.test("parseNamePrefixes() refuses an unknown provider, flag, a missing '=', a second prefix and bad prefixes, in one line naming the value and the choices", () => {
  const cases: [string[], RegExp][] = [
    [
      ["flag=x-"],
      /invalid --cluster-name-prefix "flag=x-": unknown provider "flag"; choose one of folder, secret, cluster-profile, cluster-api/,
    ],
    [["secrets=x-"], /unknown provider "secrets"; choose one of folder, secret, cluster-profile, cluster-api/],
    [["capi"], /"capi": expected PROVIDER=PREFIX, PROVIDER one of folder, secret, cluster-profile, cluster-api/],
    [["secret=a-", "secret=b-"], /"secret=b-": provider secret already has the prefix "a-"; give one/],
    [["secret="], /"secret=": the prefix is empty/],
    [["secret=Prod-"], /"secret=Prod-": a prefix starts with a lowercase letter or digit/],
    [["secret=a b"], /a prefix starts with a lowercase letter or digit/],
    [["secret=-a"], /a prefix starts with a lowercase letter or digit/],
    [["secret=a\nb"], /a prefix starts/],
    [[`secret=${"a".repeat(64)}`], /longer than 63 characters/],
  ];
  for (const [entries, want] of cases) {
    assert.throws(() => parseNamePrefixes(entries), (err: unknown) => {
      assert.ok(err instanceof NamePrefixError, String(err));
      assert.equal(err.name, "NamePrefixError");
      assert.match(err.message, want);
      assert.equal(err.message.includes("\n"), false, "one line");
      return true;
    });
  }
  assert.equal(prefixProblem("capi#"), undefined);
  assert.equal(prefixProblem("a".repeat(63)), undefined);
});

Deno.test("prefixedName() prefixes untrusted names of a prefixed provider only", () => {
  const p = parseNamePrefixes(["secret=s#", "folder=f#"]);
  assert.equal(prefixedName(p, "secret", false, "edge"), "s#edge");
  assert.equal(prefixedName(p, "folder", false, "edge"), "f#edge");
  assert.equal(prefixedName(p, "folder", true, "prod"), "prod", "a --kubeconfig file's context is never prefixed");
  assert.equal(prefixedName(p, "flag", true, "in-cluster"), "in-cluster");
  assert.equal(prefixedName(p, "cluster-api", false, "ns/a"), "ns/a", "no prefix given");
});

Deno.test("ClusterRegistry registers a prefixed provider's names with its prefix, and withdraws them by source", async () => {
  const { r, target } = registry(["cluster-api=capi#"]);
  r.offer("cluster-api", "fleet/edge", [offer("fleet/edge")]);
  r.offer("secret", "hub/edge", [offer("edge")]);
  await r.idle();
  assert.deepEqual(target.calls.sort(), ["engage capi#fleet/edge cluster-api", "engage edge secret"]);
  assert.deepEqual(r.registered().map((c) => [c.name, c.provider, c.source]), [
    ["capi#fleet/edge", "cluster-api", "fleet/edge"],
    ["edge", "secret", "hub/edge"],
  ]);
  r.withdraw("cluster-api", "fleet/edge");
  await r.idle();
  assert.deepEqual(r.registered().map((c) => c.name), ["edge"]);
  assert.equal(target.calls.at(-1), "disengage capi#fleet/edge");
});

Deno.test("ClusterRegistry: one cluster offered by two providers collides without prefixes and is served twice with them", async () => {
  // Without prefixes: the first untrusted source keeps the name, the second is a duplicate.
  const plain = registry([]);
  plain.r.offer("secret", "hub/edge", [offer("edge")]);
  plain.r.offer("folder", "/c/edge.yaml", [offer("edge", "t2", "e2")]);
  await plain.r.idle();
  assert.deepEqual(plain.target.calls, ["engage edge secret"]);
  assert.match(await plain.prom.metrics(), /^hub_cluster_name_collisions\{reason="duplicate"\} 1$/m);
  assert.match(
    plain.r.providerHealth().folder.errors[0].error,
    /cluster "edge" is already registered by secret hub\/edge/,
  );
  // With a prefix each: two names, no collision.
  const side = registry(["secret=s#", "folder=f#"]);
  side.r.offer("secret", "hub/edge", [offer("edge")]);
  side.r.offer("folder", "/c/edge.yaml", [offer("edge", "t2", "e2")]);
  await side.r.idle();
  assert.deepEqual(side.target.calls.sort(), ["engage f#edge folder", "engage s#edge secret"]);
  assert.match(await side.prom.metrics(), /^hub_cluster_name_collisions\{reason="duplicate"\} 0$/m);
  assert.deepEqual(side.r.providerHealth().folder.errors, []);
});

Deno.test("ClusterRegistry never prefixes the command line's names, and a prefixed name equal to one is still reserved", async () => {
  const { r, target, prom } = registry(["secret=prod-", "folder=dropped-"]);
  r.offer("folder", "/c/local.yaml", [offer("prod"), offer("prod-eu")], true);
  await r.idle();
  assert.deepEqual(target.calls.sort(), ["engage prod folder", "engage prod-eu folder"], "trusted names as written");
  // A Secret named "eu" becomes "prod-eu": the command line's cluster of that name keeps serving.
  r.offer("secret", "hub/eu", [offer("eu", "stolen", "attacker")]);
  r.offer("secret", "hub/in-cluster", [offer("in-cluster", "x", "y")]);
  await r.idle();
  assert.deepEqual(
    target.calls.filter((c) => c.startsWith("engage prod-eu") || c.startsWith("disengage")),
    ["engage prod-eu folder"],
    "the reserved name is never re-engaged",
  );
  assert.equal(r.registered().find((c) => c.name === "prod-eu")?.source, "/c/local.yaml");
  assert.match(
    r.providerHealth().secret.errors.find((e) => e.source === "hub/eu")!.error,
    /cluster name "prod-eu" is reserved: the command line defines it \(folder \/c\/local.yaml\)/,
  );
  assert.match(await prom.metrics(), /^hub_cluster_name_collisions\{reason="reserved"\} 1$/m);
  // "in-cluster" prefixed is "prod-in-cluster": an ordinary name, served.
  assert.ok(r.registered().some((c) => c.name === "prod-in-cluster" && c.provider === "secret"));
});

Deno.test("ClusterRegistry keeps the first of two prefixed sources that land on one name, and hands over when it goes", async () => {
  // Two providers given the same prefix collide again, under the usual first-claimant rule.
  const { r, target, clock } = registry(["secret=x#", "cluster-api=x#"]);
  r.offer("cluster-api", "ns/a", [offer("a")]);
  r.offer("secret", "hub/a", [offer("a", "t2", "e2")]);
  await r.idle();
  assert.deepEqual(target.calls, ["engage x#a cluster-api"]);
  await clock.advance(3000);
  r.withdraw("cluster-api", "ns/a");
  await r.idle();
  // The registry re-engages the name from its next source (the Hub's engage replaces what served it).
  assert.deepEqual(target.calls, ["engage x#a cluster-api", "engage x#a secret"]);
  assert.deepEqual(r.registered().map((c) => [c.name, c.source]), [["x#a", "hub/a"]]);
});

// Unit tests of the offers book: which names change, and what each name resolves to (collisions, selection) (pure).
import assert from "node:assert/strict";
import type { ClusterAccess } from "../../kube/mod.ts";
import { Offers, type Selection } from "./_offers.ts";
import type { ClusterOffer } from "./cluster_offer.ts";

function offer(name: string, over: Partial<ClusterOffer> = {}): ClusterOffer {
  const access = { name, server: "https://127.0.0.1:1", source: "test" } as unknown as ClusterAccess;
  return { name, access, endpointDigest: "e1", credentialsDigest: "c1", ...over };
}

const ALL: Selection = { names: "all" };

Deno.test("Offers.offer() answers the names whose offer is new, changed, or withdrawn, and not those unchanged", () => {
  const o = new Offers();
  assert.deepEqual(o.offer("folder", "/c/a.yaml", [offer("a"), offer("b")]), ["a", "b"]);
  assert.deepEqual(o.offer("folder", "/c/a.yaml", [offer("a"), offer("b")]), [], "the same offers change nothing");
  assert.deepEqual(o.offer("folder", "/c/a.yaml", [offer("a", { credentialsDigest: "c2" }), offer("b")]), ["a"]);
  assert.deepEqual(o.offer("folder", "/c/a.yaml", [offer("a", { credentialsDigest: "c2" })]), ["b"]);
  assert.deepEqual(o.offer("folder", "/c/a.yaml", [offer("a", { credentialsDigest: "c2", endpointDigest: "e2" })]), [
    "a",
  ]);
  assert.deepEqual(
    o.offer("folder", "/c/a.yaml", [
      offer("a", { access: undefined, error: "bad", endpointDigest: "e2", credentialsDigest: "c2" }),
    ]),
    ["a"],
  );
  const broken = (error: string) =>
    offer("a", { access: undefined, error, endpointDigest: "e2", credentialsDigest: "c2" });
  assert.deepEqual(o.offer("folder", "/c/a.yaml", [broken("worse")]), ["a"], "a new error alone is a change");
  assert.deepEqual(o.offer("folder", "/c/a.yaml", [broken("worse")]), []);
  assert.deepEqual(o.offer("folder", "/c/a.yaml", []), ["a"]);
  assert.deepEqual(o.names(), []);
  assert.deepEqual([...o.sources()], [], "a source offering nothing is forgotten");
});

Deno.test("Offers.resolve() keeps a name with the first untrusted source that offered it, names it to the later one, and hands it on once the first goes", () => {
  const servedBy = (o: Offers) => {
    const d = o.resolve("a", ALL);
    return d.kind === "serve" ? `${d.provider} ${d.source}` : d.kind;
  };
  const o = new Offers();
  o.offer("folder", "/c/a.yaml", [offer("a")]);
  assert.equal(servedBy(o), "folder /c/a.yaml");
  o.offer("secret", "hub/a", [offer("a")]);
  assert.equal(servedBy(o), "folder /c/a.yaml", "a later Secret cannot take the name");
  assert.equal(o.shadowedError("a", o.source("folder", "/c/a.yaml")!), undefined);
  assert.match(
    o.shadowedError("a", o.source("secret", "hub/a")!) ?? "",
    /name collision: cluster "a" is already registered by folder \/c\/a.yaml; secret hub\/a is ignored/,
  );
  assert.deepEqual(o.collisions(), [{ name: "a", reason: "duplicate" }]);
  o.offer("folder", "/c/a.yaml", [offer("a", { credentialsDigest: "c9" })]);
  assert.equal(servedBy(o), "folder /c/a.yaml", "a new offer from the first source keeps its place");
  const other = new Offers();
  other.offer("secret", "hub/a", [offer("a")]);
  other.offer("folder", "/c/a.yaml", [offer("a")]);
  assert.equal(servedBy(other), "secret hub/a", "the other order keeps the other source");
  assert.equal(o.claims("a"), 2);
  o.offer("folder", "/c/a.yaml", []);
  assert.equal(servedBy(o), "secret hub/a", "the next source gets the name once the first goes");
  assert.deepEqual(o.collisions(), []);
});

Deno.test("Offers.resolve() holds a name two command-line files define, naming both, whatever the order", () => {
  const first = new Offers();
  first.offer("flag", "/k/a.yaml", [offer("a")]);
  first.offer("flag", "/k/b.yaml", [offer("a")]);
  const second = new Offers();
  second.offer("flag", "/k/b.yaml", [offer("a")]);
  second.offer("flag", "/k/a.yaml", [offer("a")]);
  const held = first.resolve("a", ALL);
  assert.deepEqual(second.resolve("a", ALL), held);
  assert.match(
    held.kind === "hold" ? held.problem.error : "",
    /name collision: cluster "a" is registered 2 times \(flag \/k\/a.yaml, flag \/k\/b.yaml\)/,
  );
});

Deno.test("Offers holds a name defined twice in one source, and one whose offer is not usable, with the source's error", () => {
  const o = new Offers();
  o.offer("folder", "/c/x.yaml", [offer("a"), offer("a")]);
  const doubled = o.resolve("a", ALL);
  assert.deepEqual(doubled, {
    kind: "hold",
    problem: { provider: "folder", error: `"a" is defined twice in /c/x.yaml` },
  });
  o.offer("folder", "/c/y.yaml", [offer("b", { access: undefined })]);
  assert.deepEqual(o.resolve("b", ALL), {
    kind: "hold",
    problem: { provider: "folder", error: `cluster "b" from /c/y.yaml is not usable` },
  });
  o.offer("folder", "/c/z.yaml", [offer("c", { error: "no server in context c" })]);
  const broken = o.resolve("c", ALL);
  assert.equal(broken.kind === "hold" && broken.problem.error, "no server in context c");
});

Deno.test("Offers.resolve() ignores names not selected, and holds a selected name nobody offers with how to register it", () => {
  const o = new Offers();
  o.offer("folder", "/c/a.yaml", [offer("a"), offer("b")]);
  const selection: Selection = { names: new Set(["a", "c"]), howToRegister: "run deno task cluster:add" };
  assert.equal(o.resolve("a", selection).kind, "serve");
  assert.deepEqual(o.resolve("b", selection), { kind: "none" });
  assert.deepEqual(o.resolve("c", selection), {
    kind: "hold",
    problem: {
      error: `cluster "c" is selected by --clusters but no provider registers it yet; run deno task cluster:add`,
    },
  });
  assert.deepEqual(o.resolve("c", ALL), { kind: "none" }, "with all, a name nobody offers is nothing");
  assert.deepEqual(o.names(), ["a", "b"]);
});

Deno.test("Offers.resolve() gives a name a trusted source offers to that source alone, whatever the order, and never in-cluster to an untrusted one", () => {
  for (const trustedFirst of [true, false]) {
    const o = new Offers();
    const offerTrusted = () => o.offer("folder", "/k/hub.yaml", [offer("prod")], true);
    const offerSecret = () => o.offer("secret", "ns/prod", [offer("prod", { endpointDigest: "attacker" })]);
    const order = trustedFirst ? [offerTrusted, offerSecret] : [offerSecret, offerTrusted];
    for (const f of order) f();
    const want = o.resolve("prod", ALL);
    assert.equal(want.kind, "serve");
    assert.equal(want.kind === "serve" && want.source, "/k/hub.yaml");
    assert.deepEqual(o.collisions(), [{ name: "prod", reason: "reserved" }]);
    assert.equal(o.trusted("prod"), true);
  }
  const o = new Offers();
  o.offer("secret", "ns/in-cluster", [offer("in-cluster")]);
  assert.deepEqual(o.resolve("in-cluster", ALL), { kind: "none" });
  const held = o.resolve("in-cluster", { names: new Set(["in-cluster"]) });
  assert.equal(held.kind, "hold");
  assert.match(held.kind === "hold" ? held.problem.error : "", /"in-cluster" names the hub's own pod cluster/);
  assert.deepEqual(o.collisions(), [{ name: "in-cluster", reason: "reserved" }]);
});

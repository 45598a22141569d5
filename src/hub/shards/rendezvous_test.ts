// Unit tests of weighted rendezvous hashing: spread, weights, minimal movement, determinism.

import assert from "node:assert/strict";
import { fnv1a64, rendezvousOwner, type RendezvousPeer, unitHash } from "./rendezvous.ts";

const CLUSTERS = Array.from({ length: 10_000 }, (_, i) => `cluster-${i}`);

function counts(peers: RendezvousPeer[]): Map<string, number> {
  const c = new Map(peers.map((p) => [p.identity, 0]));
  for (const cl of CLUSTERS) {
    const o = rendezvousOwner(cl, peers)!;
    c.set(o, c.get(o)! + 1);
  }
  return c;
}

Deno.test("fnv1a64() matches the reference FNV-1a 64-bit values", () => {
  assert.equal(fnv1a64(""), 0xcbf29ce484222325n);
  assert.equal(fnv1a64("a"), 0xaf63dc4c8601ec8cn);
  assert.equal(fnv1a64("foobar"), 0x85944171f73967e8n);
});

Deno.test("unitHash() stays inside the open interval (0, 1)", () => {
  for (const cl of CLUSTERS.slice(0, 2000)) {
    const u = unitHash(cl, "peer");
    assert.ok(u > 0 && u < 1, `u=${u}`);
  }
});

Deno.test("rendezvousOwner() spreads 10,000 clusters evenly over three equal peers", () => {
  const c = counts([{ identity: "a", weight: 1 }, { identity: "b", weight: 1 }, { identity: "c", weight: 1 }]);
  for (const [peer, n] of c) assert.ok(Math.abs(n - 10_000 / 3) < 250, `${peer} got ${n}`);
});

Deno.test("rendezvousOwner() gives a peer of weight 2 about twice the clusters of a peer of weight 1", () => {
  const c = counts([{ identity: "a", weight: 2 }, { identity: "b", weight: 1 }, { identity: "c", weight: 1 }]);
  const ratio = c.get("a")! / ((c.get("b")! + c.get("c")!) / 2);
  assert.ok(ratio > 1.85 && ratio < 2.15, `weight 2 / weight 1 = ${ratio.toFixed(3)} (${[...c]})`);
  assert.ok(Math.abs(c.get("a")! - 5000) < 250, `a got ${c.get("a")}`);
});

Deno.test("rendezvousOwner() moves about 1/4 of the clusters, all to the new peer, when a fourth peer joins", () => {
  const three = [{ identity: "a", weight: 1 }, { identity: "b", weight: 1 }, { identity: "c", weight: 1 }];
  const four = [...three, { identity: "d", weight: 1 }];
  let moved = 0;
  for (const cl of CLUSTERS) {
    const before = rendezvousOwner(cl, three);
    const after = rendezvousOwner(cl, four);
    if (before !== after) {
      moved++;
      assert.equal(after, "d", `${cl} moved from ${before} to ${after}, not to the new peer`);
    }
  }
  const fraction = moved / CLUSTERS.length;
  assert.ok(Math.abs(fraction - 0.25) < 0.02, `moved ${fraction}`);
});

Deno.test("rendezvousOwner() moves only the removed peer's clusters when a peer leaves", () => {
  const three = [{ identity: "a", weight: 1 }, { identity: "b", weight: 1 }, { identity: "c", weight: 1 }];
  for (const cl of CLUSTERS.slice(0, 3000)) {
    const before = rendezvousOwner(cl, three)!;
    const after = rendezvousOwner(cl, three.filter((p) => p.identity !== "b"));
    if (before !== "b") assert.equal(after, before);
  }
});

Deno.test("rendezvousOwner() does not depend on the order of the peers, and ignores weight 0", () => {
  const peers = [{ identity: "x", weight: 1 }, { identity: "y", weight: 3 }, { identity: "z", weight: 0 }];
  for (const cl of CLUSTERS.slice(0, 500)) {
    const o = rendezvousOwner(cl, peers);
    assert.equal(rendezvousOwner(cl, [...peers].reverse()), o);
    assert.notEqual(o, "z");
  }
  assert.equal(rendezvousOwner("c", []), undefined);
});

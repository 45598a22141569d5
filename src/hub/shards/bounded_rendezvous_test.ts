// Unit tests of bounded-load rendezvous hashing over many seeded random peer sets, beside plain HRW on the same sets.

import assert from "node:assert/strict";
import { boundedCapacity, boundedRendezvous } from "./bounded_rendezvous.ts";
import { rendezvousOwner, type RendezvousPeer, unitHash } from "./rendezvous.ts";

const TRIALS = 1000;
const CLUSTERS = Array.from({ length: 30 }, (_, i) => `shard-${String(i + 1).padStart(2, "0")}`);

/** mulberry32: a seeded generator, so every run draws the same identities. */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}

/** Identities shaped like the hub's own: one hostname, a random 6-hex-digit suffix (main.ts). */
function identities(random: () => number, count: number): RendezvousPeer[] {
  const hex = () => Math.floor(random() * 0x1000000).toString(16).padStart(6, "0");
  return Array.from({ length: count }, () => ({ identity: `hub-7c9f_${hex()}`, weight: 1 }));
}

type Assign = (clusters: readonly string[], peers: readonly RendezvousPeer[]) => Map<string, string>;
/** ln(u) of each (cluster, peer), computed once: both rules below read the same hashes. */
const logs = new Map<string, number>();
function logU(cluster: string, peer: string): number {
  const key = `${cluster}\u0000${peer}`;
  let l = logs.get(key);
  if (l === undefined) logs.set(key, l = Math.log(unitHash(cluster, peer)));
  return l;
}
const bounded: Assign = (clusters, peers) => boundedRendezvous(clusters, peers, { logU });
/** Plain HRW: no cap can bind with a slack of n (the last test checks this equals rendezvousOwner). */
const plain: Assign = (clusters, peers) => boundedRendezvous(clusters, peers, { logU, slack: clusters.length });

function shares(owners: Map<string, string>, peers: readonly RendezvousPeer[]): number[] {
  const n = new Map(peers.map((p) => [p.identity, 0]));
  for (const o of owners.values()) n.set(o, n.get(o)! + 1);
  return [...n.values()];
}

function quantile(values: number[], q: number): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))];
}

interface Trials {
  largest: number[];
  smallest: number[];
  /** Fraction of the 30 clusters whose owner changed when a fourth peer joined. */
  joinMoved: number[];
  /** Of those, clusters that moved between the three old peers (not to the new one). */
  joinShuffled: number[];
  /** Clusters that moved when one of the three left, other than the leaver's own. */
  leaveExtra: number[];
}

function trials(assign: Assign, seed: number): Trials {
  const random = seeded(seed);
  const t: Trials = { largest: [], smallest: [], joinMoved: [], joinShuffled: [], leaveExtra: [] };
  for (let i = 0; i < TRIALS; i++) {
    const [a, b, c, d] = identities(random, 4);
    const three = [a, b, c];
    const before = assign(CLUSTERS, three);
    const s = shares(before, three);
    t.largest.push(Math.max(...s));
    t.smallest.push(Math.min(...s));
    const after = assign(CLUSTERS, [...three, d]);
    const moved = CLUSTERS.filter((x) => before.get(x) !== after.get(x));
    t.joinMoved.push(moved.length / CLUSTERS.length);
    t.joinShuffled.push(moved.filter((x) => after.get(x) !== d.identity).length);
    const left = assign(CLUSTERS, [a, c]);
    t.leaveExtra.push(CLUSTERS.filter((x) => before.get(x) !== b.identity && left.get(x) !== before.get(x)).length);
  }
  return t;
}

const describe = (v: number[], digits = 3) =>
  `median ${quantile(v, 0.5).toFixed(digits)}, p90 ${quantile(v, 0.9).toFixed(digits)}, max ${
    Math.max(...v).toFixed(digits)
  }`;

Deno.test(`boundedRendezvous() keeps 30 clusters on 3 equal peers within 10 ± 3 in each of ${TRIALS} random peer sets, where plain HRW does not`, () => {
  const b = trials(bounded, 1);
  const h = trials(plain, 1);
  const outside = (t: Trials) => t.largest.filter((x, i) => x > 13 || t.smallest[i] < 7).length;
  console.log(
    `  shares of 30 over 3 peers, ${TRIALS} sets: bounded largest ${describe(b.largest, 0)}, smallest min ${
      Math.min(...b.smallest)
    }; plain HRW largest ${describe(h.largest, 0)}, smallest min ${Math.min(...h.smallest)}, ${
      outside(h)
    } sets outside 10 ± 3`,
  );
  assert.equal(outside(b), 0);
  assert.ok(Math.max(...b.largest) <= 11 && Math.min(...b.smallest) >= 8, "caps of 11 leave at least 8 each");
  assert.ok(outside(h) > 0, "plain HRW scatters on 30 clusters (the reason for the caps)");
});

Deno.test(`boundedRendezvous() moves at most 0.30 of 30 clusters at the median when a fourth peer joins, over ${TRIALS} sets`, () => {
  const b = trials(bounded, 2);
  const h = trials(plain, 2);
  const over = (t: Trials) => t.joinMoved.filter((x) => x > 0.3 + 1e-9).length;
  console.log(
    `  moved on join: bounded ${describe(b.joinMoved)} (${over(b)}/${TRIALS} over 0.30; moved between old peers ${
      describe(b.joinShuffled, 0)
    }); plain HRW ${describe(h.joinMoved)} (${over(h)}/${TRIALS} over 0.30)`,
  );
  assert.ok(quantile(b.joinMoved, 0.5) <= 0.3, `median ${quantile(b.joinMoved, 0.5)}`);
  // The new peer takes at most its cap (⌈30/4⌉ + 1 = 9); the tail is clusters a cap diverted differently.
  assert.ok(quantile(b.joinMoved, 0.9) <= 11 / 30 + 1e-9, `p90 ${quantile(b.joinMoved, 0.9)}`);
  assert.ok(Math.max(...b.joinMoved) < Math.max(...h.joinMoved), "bounded's worst join moves less than plain HRW's");
  assert.ok(quantile(b.joinShuffled, 0.5) <= 1, `median moves between old peers ${quantile(b.joinShuffled, 0.5)}`);
  assert.equal(Math.max(...h.joinShuffled), 0, "plain HRW moves clusters only to the new peer");
});

Deno.test(`boundedRendezvous() moves few clusters beyond a leaving peer's own, over ${TRIALS} sets`, () => {
  const b = trials(bounded, 3);
  const h = trials(plain, 3);
  const some = b.leaveExtra.filter((x) => x > 0).length;
  console.log(
    `  moved beyond the leaver's own (of 30): bounded ${
      describe(b.leaveExtra, 0)
    } (${some}/${TRIALS} sets move any); ` +
      `plain HRW max ${Math.max(...h.leaveExtra)}`,
  );
  assert.equal(quantile(b.leaveExtra, 0.5), 0);
  assert.ok(quantile(b.leaveExtra, 0.9) <= 2, `p90 ${quantile(b.leaveExtra, 0.9)}`);
  assert.equal(Math.max(...h.leaveExtra), 0);
});

Deno.test("boundedRendezvous() gives a peer of weight 2 about twice the clusters of a peer of weight 1", () => {
  const many = Array.from({ length: 10_000 }, (_, i) => `cluster-${i}`);
  const peers = [{ identity: "a", weight: 2 }, { identity: "b", weight: 1 }, { identity: "c", weight: 1 }];
  const [a, b, c] = shares(boundedRendezvous(many, peers), peers);
  const ratio = a / ((b + c) / 2);
  assert.ok(ratio > 1.95 && ratio < 2.05, `weight 2 / weight 1 = ${ratio.toFixed(3)} (${a}, ${b}, ${c})`);
  // 30 clusters: caps ⌈15⌉ + 1 = 16 and ⌈7.5⌉ + 1 = 9, so the weight-2 peer holds 12 to 16 and about 15 on average.
  const random = seeded(4);
  let heavy = 0;
  let light = 0;
  for (let i = 0; i < 200; i++) {
    const ps = identities(random, 3).map((p, j) => ({ ...p, weight: j === 0 ? 2 : 1 }));
    const s = shares(boundedRendezvous(CLUSTERS, ps, { logU }), ps);
    assert.ok(s[0] >= 12 && s[0] <= 16, `weight 2 got ${s[0]} of 30 (${s})`);
    assert.ok(s[1] <= 9 && s[2] <= 9, `weight 1 got ${s[1]} and ${s[2]} of 30`);
    heavy += s[0];
    light += (s[1] + s[2]) / 2;
  }
  assert.ok(heavy / light > 1.8 && heavy / light < 2.2, `30 clusters: weight 2 / weight 1 = ${heavy / light}`);
});

Deno.test("boundedRendezvous() owns every cluster once, never above a cap, and is plain HRW when no cap binds", () => {
  const random = seeded(5);
  for (let i = 0; i < 300; i++) {
    const count = 1 + Math.floor(random() * 6);
    const peers = identities(random, count).map((p) => ({ ...p, weight: 1 + Math.floor(random() * 3) }));
    const n = 1 + Math.floor(random() * 60);
    const names = CLUSTERS.concat(CLUSTERS.map((c) => `${c}-b`)).slice(0, n);
    const owners = boundedRendezvous(names, peers);
    assert.equal(owners.size, n);
    const total = peers.reduce((s, p) => s + p.weight, 0);
    for (const [j, s] of shares(owners, peers).entries()) {
      assert.ok(s <= boundedCapacity(n, peers[j].weight, total), `${s} over the cap of weight ${peers[j].weight}`);
    }
    const loose = boundedRendezvous(names, peers, { slack: n });
    for (const c of names) assert.equal(loose.get(c), rendezvousOwner(c, peers));
  }
});

Deno.test("boundedRendezvous() does not depend on the order of clusters or peers, and skips weight 0", () => {
  const peers = [{ identity: "x", weight: 1 }, { identity: "y", weight: 3 }, { identity: "z", weight: 0 }];
  const owners = boundedRendezvous(CLUSTERS, peers);
  assert.deepEqual(
    [...boundedRendezvous([...CLUSTERS].reverse(), [...peers].reverse())].sort(),
    [...owners].sort(),
  );
  assert.ok(![...owners.values()].includes("z"));
  assert.equal(boundedRendezvous(CLUSTERS, []).size, 0);
  assert.equal(boundedRendezvous([], peers).size, 0);
  assert.equal(boundedCapacity(30, 1, 3), 11);
  assert.equal(boundedCapacity(30, 1, 4), 9);
  assert.equal(boundedCapacity(30, 0, 4), 0);
});

// Unit tests for the structure drawing's graph algorithms: components and floors.
import assert from "node:assert/strict";
import { floors, type Graph, stronglyConnected } from "./graph.ts";

const graph = (edges: string): Graph => {
  const g: Graph = new Map();
  for (const e of edges.split(/\s+/).filter(Boolean)) {
    const [a, b] = e.split(">");
    if (!g.has(a)) g.set(a, new Set());
    if (b) g.get(a)!.add(b);
  }
  return g;
};

Deno.test("a cycle is one component and the nodes outside it are components of their own", () => {
  const comps = stronglyConnected(graph("a>b b>c c>a c>d d>e"));
  assert.deepEqual(comps.map((c) => c.join("")).sort(), ["abc", "d", "e"]);
});

Deno.test("components come after every component they reach", () => {
  const comps = stronglyConnected(graph("top>mid mid>low x>y y>x x>low"));
  const pos = (n: string) => comps.findIndex((c) => c.includes(n));
  assert.ok(pos("low") < pos("mid") && pos("mid") < pos("top"));
  assert.ok(pos("low") < pos("x"));
});

Deno.test("a chain of ten thousand nodes does not overflow the stack", () => {
  const g: Graph = new Map();
  for (let i = 0; i < 10_000; i++) g.set(`n${i}`, new Set([`n${i + 1}`]));
  assert.equal(stronglyConnected(g).length, 10_001);
  assert.equal(floors(g).count, 10_001);
});

Deno.test("floors are longest paths down: a node sits one above the highest node it imports", () => {
  const f = floors(graph("cli>hub cli>util hub>kube kube>util hub>util queue>util"));
  assert.deepEqual(Object.fromEntries(f.floor), { cli: 3, hub: 2, kube: 1, queue: 1, util: 0 });
  assert.equal(f.count, 4);
  assert.deepEqual(f.backEdges, []);
});

Deno.test("edges inside a cycle are the arrows running back up, and the cycle shares one floor", () => {
  const f = floors(graph("hub>kube kube>hub kube>util cli>hub"));
  assert.deepEqual(f.backEdges, [["hub", "kube"], ["kube", "hub"]]);
  assert.equal(f.floor.get("hub"), 1);
  assert.equal(f.floor.get("kube"), 1);
  assert.equal(f.floor.get("cli"), 2);
});

Deno.test("an empty graph has no floors", () => {
  assert.equal(floors(new Map()).count, 0);
});

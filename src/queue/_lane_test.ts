import assert from "node:assert/strict";
import { type Entry, Lane } from "./_lane.ts";

Deno.test("Lane skips entries that left for another lane and counts only those waiting", () => {
  const lane = new Lane("low");
  const entries: Entry[] = Array.from({ length: 5 }, (_, i) => ({ key: `k${i}`, at: i, priority: "low" }));
  for (const e of entries) lane.push(e);
  entries[0].priority = "live";
  lane.left();
  entries[2].priority = "live";
  lane.left();
  assert.equal(lane.length, 3);
  assert.equal(lane.peek()?.key, "k1");
  assert.deepEqual([...lane].map((e) => e.key), ["k1", "k3", "k4"]);
  assert.deepEqual([lane.shift()?.key, lane.shift()?.key, lane.shift()?.key, lane.shift()], [
    "k1",
    "k3",
    "k4",
    undefined,
  ]);
  assert.equal(lane.length, 0);
});

Deno.test("Lane drops stale copies once they outnumber the waiting entries", () => {
  const lane = new Lane("low");
  const entries: Entry[] = Array.from({ length: 1_000 }, (_, i) => ({ key: `k${i}`, at: i, priority: "low" }));
  for (const e of entries) lane.push(e);
  for (let i = 0; i < 990; i++) {
    entries[i].priority = "live";
    lane.left();
  }
  assert.equal(lane.length, 10);
  assert.deepEqual([...lane].map((e) => e.key), entries.slice(990).map((e) => e.key));
});

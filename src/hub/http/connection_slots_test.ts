// Unit tests for the slot table: who is closed to make room at the cap, and in which order.
import assert from "node:assert/strict";
import { ConnectionSlots } from "./connection_slots.ts";

/** A table of `max` slots whose evictions are written to `closed`. */
function table(max: number) {
  const closed: string[] = [];
  const slots = new ConnectionSlots<string>(max);
  const open = (key: string) => slots.open(key, () => closed.push(key));
  return { slots, closed, open };
}

Deno.test("ConnectionSlots at its cap closes the connection idle the longest to admit a new one", () => {
  const { slots, closed, open } = table(3);
  assert.ok(open("a") && open("b") && open("c"));
  assert.equal(slots.size, 3);
  assert.ok(open("d"));
  assert.deepEqual(closed, ["a"]);
  assert.ok(open("e"));
  assert.deepEqual(closed, ["a", "b"]);
  assert.equal(slots.size, 3);
  assert.ok(!slots.has("a") && slots.has("e"));
  assert.deepEqual(slots.evictions, { idle: 2, body: 0 });
});

Deno.test("ConnectionSlots closes a connection just answered (kept alive) after every other idle one, until its grace ends", () => {
  let now = 0;
  const closed: string[] = [];
  const slots = new ConnectionSlots<string>(3, { keptGraceMs: 1_000, now: () => now });
  const open = (key: string) => slots.open(key, () => closed.push(key));
  open("kept");
  open("x");
  open("y");
  // "kept" is served a request and answered: idle again, with a grace.
  slots.mark("kept", "busy");
  now = 10;
  slots.mark("kept", "idle");
  open("z");
  open("w");
  assert.deepEqual(closed, ["x", "y"]);
  // Marking the state it is already in changes nothing.
  slots.mark("z", "idle");
  slots.mark("kept", "idle");
  open("v");
  assert.deepEqual(closed, ["x", "y", "z"], "within its grace the kept-alive one outlives newer idle ones");
  // Its grace over, it is an ordinary idle connection, the newest (its grace ending counts as its last change).
  now = 1_010;
  open("u");
  assert.deepEqual(closed, ["x", "y", "z", "w"]);
  open("t");
  assert.deepEqual(closed, ["x", "y", "z", "w", "v"]);
  open("s");
  assert.deepEqual(closed, ["x", "y", "z", "w", "v", "kept"]);
});

Deno.test("ConnectionSlots gives the grace to at most keptMax connections, the most recently answered", () => {
  const closed: string[] = [];
  const slots = new ConnectionSlots<string>(4, { keptMax: 2, now: () => 0 });
  const open = (key: string) => slots.open(key, () => closed.push(key));
  for (const k of ["a", "b", "c", "d"]) {
    open(k);
    slots.mark(k, "busy");
    slots.mark(k, "idle");
  }
  // a and b lost their grace to c and d: ordinary idle, a the oldest.
  open("n1");
  open("n2");
  assert.deepEqual(closed, ["a", "b"]);
  open("n3");
  assert.deepEqual(closed, ["a", "b", "n1"], "newcomers take turns in the other half; c and d keep theirs");
});

Deno.test("ConnectionSlots closes the oldest body only when none is idle, and never a connection being answered", () => {
  const { slots, closed, open } = table(3);
  open("slow");
  open("fast");
  open("answering");
  slots.mark("slow", "body");
  slots.mark("fast", "body");
  slots.mark("answering", "busy");
  assert.ok(open("n1"));
  assert.deepEqual(closed, ["slow"], "no idle one: the body arriving the longest");
  slots.mark("n1", "busy");
  assert.ok(open("n2"));
  assert.deepEqual(closed, ["slow", "fast"]);
  slots.mark("n2", "busy");
  assert.equal(open("n3"), false, "every connection is being answered: the newcomer is refused");
  assert.deepEqual(closed, ["slow", "fast"]);
  assert.equal(slots.size, 3);
  assert.deepEqual(slots.evictions, { idle: 0, body: 2 });
});

Deno.test("ConnectionSlots frees a closed connection's slot without evicting it, and ignores marks of a gone one", () => {
  const { slots, closed, open } = table(2);
  open("a");
  open("b");
  slots.close("a");
  slots.mark("a", "busy");
  assert.equal(slots.has("a"), false);
  assert.ok(open("c"));
  assert.deepEqual(closed, []);
  assert.equal(slots.count("idle"), 2);
  slots.mark("b", "body");
  assert.equal(slots.count("body"), 1);
  assert.throws(() => new ConnectionSlots(0), /positive integer, got 0/);
});

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

Deno.test("ConnectionSlots orders idle connections by when they last became idle: a connection just answered goes last", () => {
  const { slots, closed, open } = table(3);
  open("kept");
  open("x");
  open("y");
  // "kept" is served a request and answered: it is idle again, newer than x and y.
  slots.mark("kept", "busy");
  slots.mark("kept", "idle");
  open("z");
  open("w");
  assert.deepEqual(closed, ["x", "y"]);
  // Marking the state it is already in does not make it newer.
  slots.mark("z", "idle");
  open("v");
  assert.deepEqual(closed, ["x", "y", "kept"]);
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

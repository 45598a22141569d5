import assert from "node:assert/strict";
import { VirtualClock } from "../util/clock.ts";
import { DelayedAdds } from "./_delayed_adds.ts";
import type { QueuePriority } from "./_lane.ts";

Deno.test("DelayedAdds hands keys over in due order with one timer, keeping the earlier time and the higher priority", async () => {
  const clock = new VirtualClock();
  const due: [string, QueuePriority, number][] = [];
  const delayed = new DelayedAdds<string>(clock, (key, priority) => due.push([key, priority, clock.now()]));
  delayed.schedule("b", "b", 20, "low");
  delayed.schedule("a", "a", 10, "low");
  delayed.schedule("a", "a", 15, "live");
  delayed.schedule("c", "c", 30, "live");
  delayed.schedule("c", "c", 5, "low");
  assert.equal(clock.pending, 1);
  assert.equal(delayed.size, 3);
  await clock.advance(30);
  assert.deepEqual(due, [["c", "live", 5], ["a", "live", 10], ["b", "low", 20]]);
  assert.equal(clock.pending, 0, "no timer while nothing waits");
});

Deno.test("DelayedAdds.clear() cancels its timer and drops every key", async () => {
  const clock = new VirtualClock();
  let calls = 0;
  const delayed = new DelayedAdds<number>(clock, () => calls++);
  for (let i = 0; i < 100; i++) delayed.schedule(`k${i}`, i, 10 + i, "live");
  delayed.clear();
  assert.equal(clock.pending, 0);
  await clock.advance(1_000);
  assert.equal(calls, 0);
  assert.equal(delayed.size, 0);
});

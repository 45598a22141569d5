// Unit tests for the served clusters: engaged through the registry's target, forgotten once disengaged.
import assert from "node:assert/strict";
import type { EngageTarget } from "../providers/mod.ts";
import { ServedClusters } from "./served_clusters.ts";

Deno.test("ServedClusters serves a name from the start of its engage until its disengage settled, then tells its listeners", async () => {
  const calls: string[] = [];
  const served = new ServedClusters();
  const forgotten: string[] = [];
  served.onForget((n) => forgotten.push(n));
  let seenDuringEngage = false;
  const target: EngageTarget = {
    engage: (name) => {
      seenDuringEngage = served.has(name);
      calls.push(`engage ${name}`);
      return Promise.resolve();
    },
    disengage: (name) => {
      assert.ok(served.has(name), "still served while disengaging");
      calls.push(`disengage ${name}`);
      return Promise.resolve();
    },
    hold: (name) => void calls.push(`hold ${name}`),
    removed: (name) => Promise.resolve(void calls.push(`removed ${name}`)),
  };
  const tracked = served.tracking(target);
  // deno-lint-ignore no-explicit-any -- the access and registration are passed through untouched
  await tracked.engage("prod", {} as any, {} as any);
  assert.ok(seenDuringEngage);
  tracked.hold("held", { error: "a collision" } as never);
  assert.deepEqual(served.names(), ["prod"], "a held name is not served");
  await tracked.disengage("prod");
  // deno-lint-ignore no-explicit-any
  await tracked.removed!("prod", {} as any);
  assert.equal(served.has("prod"), false);
  assert.deepEqual(forgotten, ["prod"]);
  assert.deepEqual(calls, ["engage prod", "hold held", "disengage prod", "removed prod"]);
  assert.equal(tracked.showProviders, undefined, "only the hooks the target has");
});

// Tests of the shard tests' fixtures: the recording target's calls and deferred teardowns, the unreachable access.
import assert from "node:assert/strict";
import { RecordingTarget, unreachableAccess } from "./shard_target.ts";

Deno.test("RecordingTarget records calls in order and which clusters are engaged; disengage settles at once by default", async () => {
  const t = new RecordingTarget();
  await t.engage("a");
  t.pause("a");
  t.resume("a");
  t.hold("b", undefined);
  assert.deepEqual([...t.engaged], ["a"]);
  await t.disengage("a");
  assert.deepEqual(t.calls, ["engage a", "pause a", "resume a", "hold b", "disengage a"]);
  assert.equal(t.engaged.size, 0);
});

Deno.test("With deferTeardowns, disengage settles only on finish, resolved or rejected with the given error", async () => {
  const t = new RecordingTarget({ deferTeardowns: true });
  let settled = false;
  const a = t.disengage("a").then(() => (settled = true));
  await Promise.resolve();
  assert.equal(settled, false);
  t.finish("a");
  await a;
  assert.equal(settled, true);
  const b = t.disengage("b");
  t.finish("b", new Error("would not stop"));
  await assert.rejects(b, /would not stop/);
  assert.throws(() => t.finish("c"), /no teardown of c/);
});

Deno.test("unreachableAccess names a host that cannot resolve and never hands out credentials", async () => {
  const a = unreachableAccess("x");
  assert.equal(a.name, "x");
  assert.equal(new URL(a.server).hostname, "x.invalid");
  await assert.rejects(a.auth(), /unused/);
});

// Tests for Engagements: what a replica engages, pauses, resumes and disengages in its target, with and without warm.

import assert from "node:assert/strict";
import { Logger } from "../../util/mod.ts";
import type { ClusterRegistration } from "../hub.ts";
import { Engagements } from "./_engagements.ts";
import { RecordingTarget, unreachableAccess } from "../../../dev/support/shard_target.ts";

const ACCESS = unreachableAccess("a");
const REG: ClusterRegistration = { provider: "flag", registeredAt: "2026-12-03T00:00:00Z" };

function setup(warm: boolean) {
  const lines: string[] = [];
  const e = new Engagements(warm, new Logger({ level: "debug", write: (l) => lines.push(l) }));
  const target = new RecordingTarget({ deferTeardowns: true });
  e.connect(target);
  return { e, target, lines };
}

Deno.test("Without warm, a registered cluster is engaged only once it reconciles here, and re-engaged on a new endpoint", async () => {
  const { e, target } = setup(false);
  await e.register("a", ACCESS, REG, false);
  await e.register("a", ACCESS, REG, true);
  assert.deepEqual(target.calls, [], "not engaged: nothing to re-engage");
  await e.startReconciling("a", ACCESS, REG);
  assert.equal(e.isReconciling("a"), true);
  await e.register("a", ACCESS, REG, true);
  assert.deepEqual(target.calls, ["engage a", "engage a"]);
});

Deno.test("Without warm, stopReconciling disengages at once and tracks the teardown until it settles", async () => {
  const { e, target } = setup(false);
  await e.startReconciling("a", ACCESS, REG);
  e.stopReconciling("a");
  assert.deepEqual(target.calls, ["engage a", "disengage a"], "the stop happened before stopReconciling returned");
  assert.equal(e.isReconciling("a"), false);
  assert.equal(e.teardowns, 1);
  e.stopReconciling("a"); // not engaged any more: no second disengage
  assert.deepEqual(target.calls, ["engage a", "disengage a"]);
  target.finish("a");
  await new Promise((r) => setTimeout(r, 0));
  assert.equal(e.teardowns, 0);
});

Deno.test("With warm, a registered cluster is engaged paused, resumed when it reconciles here, paused when it stops", async () => {
  const { e, target } = setup(true);
  await e.register("a", ACCESS, REG, false);
  await e.startReconciling("a", ACCESS, REG);
  await e.register("a", ACCESS, REG, true); // a new endpoint while reconciling: engaged again, not paused
  e.stopReconciling("a");
  assert.deepEqual(target.calls, ["pause a", "engage a", "resume a", "engage a", "pause a"]);
  assert.equal(e.isReconciling("a"), false);
  const gone = e.disengage("a");
  target.finish("a");
  await gone;
  assert.deepEqual(target.calls.slice(5), ["disengage a"], "a warm cluster stays engaged until unregistered");
});

Deno.test("disengage() disengages only a cluster that is engaged", async () => {
  const { e, target } = setup(false);
  await e.register("a", ACCESS, REG, false);
  await e.disengage("a");
  assert.deepEqual(target.calls, []);
  await e.startReconciling("b", ACCESS, REG);
  const done = e.disengage("b");
  target.finish("b");
  await done;
  assert.deepEqual(target.calls, ["engage b", "disengage b"]);
});

Deno.test("A failed teardown is logged as a warning and no longer counted", async () => {
  const { e, target, lines } = setup(false);
  await e.startReconciling("a", ACCESS, REG);
  e.stopReconciling("a");
  target.finish("a", new Error("watch would not stop"));
  await new Promise((r) => setTimeout(r, 0));
  assert.equal(e.teardowns, 0);
  const warn = lines.map((l) => JSON.parse(l)).find((l) => l.msg === "cluster teardown failed");
  assert.ok(warn, lines.join("\n"));
  assert.equal(warn.level, "warn");
  assert.match(String(warn.error), /watch would not stop/);
});

Deno.test("disengageAll() disengages every engaged cluster and settles only once every teardown did", async () => {
  const { e, target } = setup(false);
  await e.startReconciling("a", ACCESS, REG);
  await e.startReconciling("b", ACCESS, REG);
  await e.startReconciling("c", ACCESS, REG);
  e.stopReconciling("c");
  let settled = false;
  const all = e.disengageAll().then(() => (settled = true));
  await new Promise((r) => setTimeout(r, 0));
  assert.deepEqual(target.calls.slice(3).sort(), ["disengage a", "disengage b", "disengage c"]);
  target.finish("a");
  target.finish("b");
  await new Promise((r) => setTimeout(r, 0));
  assert.equal(settled, false, "c's teardown is still winding down");
  target.finish("c");
  await all;
  assert.equal(e.teardowns, 0);
  await e.disengage("a");
  assert.equal(target.calls.length, 6, "nothing is engaged any more");
});

Deno.test("Engagements.target is unset until connect() sets it", () => {
  const e = new Engagements(false, new Logger({ write: () => {} }));
  assert.equal(e.target, undefined);
  const t = new RecordingTarget({ deferTeardowns: true });
  e.connect(t);
  assert.equal(e.target, t);
});

// Unit tests for the event recorder.
// deno-lint-ignore-file no-explicit-any
import assert from "node:assert/strict";
import { silentLogger, VirtualClock } from "../util/mod.ts";
import { EventRecorder } from "./events.ts";

const obj = { apiVersion: "demo.operator/v1", kind: "Uuid", metadata: { name: "a", namespace: "ns", uid: "u1" } };

function setup(options: { minLevel?: "Normal" | "Warning"; fail?: boolean } = {}) {
  const calls: { method: string; path: string; body: any }[] = [];
  const clock = new VirtualClock(1_700_000_000_000);
  const rec = new EventRecorder({
    api: {
      request: (method, path, o) => {
        calls.push({ method, path, body: o?.body });
        return options.fail ? Promise.reject(new Error("403 forbidden")) : Promise.resolve(undefined as never);
      },
    },
    component: "operator-hub",
    minLevel: options.minLevel,
    clock,
    logger: silentLogger(),
  });
  return { calls, clock, rec };
}

Deno.test("EventRecorder posts a Warning once, then counts repeats on the same Event", async () => {
  const { calls, rec } = setup();
  await rec.record(obj, "Warning", "InvalidUuid", "bad");
  await rec.record(obj, "Warning", "InvalidUuid", "bad");
  await rec.record(obj, "Warning", "InvalidUuid", "bad");
  assert.deepEqual(calls.map((c) => c.method), ["POST", "PATCH", "PATCH"]);
  assert.equal(calls[0].path, "/api/v1/namespaces/ns/events");
  assert.equal(calls[0].body.involvedObject.uid, "u1");
  assert.equal(calls[2].body.count, 3);
  assert.ok(calls[2].path.endsWith(calls[0].body.metadata.name));
});

Deno.test("EventRecorder skips Normal events at the default Warning level", async () => {
  const { calls, rec } = setup();
  await rec.record(obj, "Normal", "Assigned", "ok");
  assert.equal(calls.length, 0);
  const normal = setup({ minLevel: "Normal" });
  await normal.rec.record(obj, "Normal", "Assigned", "ok");
  assert.equal(normal.calls.length, 1);
});

Deno.test("EventRecorder starts a new Event after the aggregation window", async () => {
  const { calls, clock, rec } = setup();
  await rec.record(obj, "Warning", "InvalidUuid", "bad");
  await clock.advance(11 * 60_000);
  await rec.record(obj, "Warning", "InvalidUuid", "bad");
  assert.deepEqual(calls.map((c) => c.method), ["POST", "POST"]);
});

Deno.test("EventRecorder.record() never throws when the API refuses", async () => {
  const { calls, rec } = setup({ fail: true });
  await rec.record(obj, "Warning", "InvalidUuid", "bad");
  await rec.record(obj, "Warning", "InvalidUuid", "bad");
  assert.deepEqual(calls.map((c) => c.method), ["POST", "POST"], "a failed POST is not followed by a PATCH");
});

// Unit tests for the check that a decoded watch-stream line is a watch event.
import assert from "node:assert/strict";
import { NdjsonError } from "./wire/_ndjson.ts";
import { toWatchEvent } from "./watch_event.ts";

Deno.test("toWatchEvent accepts every watch event type with an object and returns the value itself", () => {
  for (const type of ["ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR"]) {
    const line = { type, object: { metadata: { name: "x" } } };
    assert.equal(toWatchEvent(line, "/api/v1/pods"), line);
  }
});

Deno.test("toWatchEvent rejects lines that are not watch events with an NdjsonError naming the path", () => {
  const bad: unknown[] = [
    null,
    "ADDED",
    [],
    { object: {} },
    { type: "CREATED", object: {} },
    { type: "added", object: {} },
    { type: 1, object: {} },
    { type: "ADDED" },
    { type: "ADDED", object: "x" },
  ];
  for (const v of bad) {
    assert.throws(() => toWatchEvent(v, "/apis/g/v1/ks"), (err: Error) => {
      assert.ok(err instanceof NdjsonError, JSON.stringify(v));
      assert.equal(err.message, "GET /apis/g/v1/ks: a line of the watch stream is not a watch event");
      return true;
    });
  }
});

import assert from "node:assert/strict";
import { HEALTH_STATES, worstState } from "./health_state.ts";

Deno.test("worstState() picks the most severe state, unreachable above everything and watching below", () => {
  assert.equal(worstState(["watching", "missing-crd"]), "missing-crd");
  assert.equal(worstState(["missing-crd", "forbidden", "watching"]), "forbidden");
  assert.equal(worstState(["syncing", "watching"]), "syncing");
  assert.equal(worstState(["unauthorized", "unreachable"]), "unreachable");
  assert.equal(worstState([]), "connecting");
});

Deno.test("HEALTH_STATES lists every state once, watching first and unreachable last", () => {
  assert.equal(new Set(HEALTH_STATES).size, HEALTH_STATES.length);
  assert.equal(HEALTH_STATES[0], "watching");
  assert.equal(HEALTH_STATES.at(-1), "unreachable");
  assert.equal(HEALTH_STATES.length, 9);
});

Deno.test("worstState() ranks too-large beside the one-resource states, below a cluster that refuses or cannot be reached", () => {
  assert.equal(worstState(["watching", "too-large"]), "too-large");
  assert.equal(worstState(["missing-crd", "too-large"]), "too-large");
  assert.equal(worstState(["too-large", "forbidden"]), "forbidden");
  assert.equal(worstState(["too-large", "unreachable"]), "unreachable");
});

// Unit tests for the Uuid status rule.
import assert from "node:assert/strict";
import { decide, OK_MESSAGE, statusFor } from "./status_rule.ts";

const VALID = "0f8fad5b-d9cb-469f-a165-70867728950e";

Deno.test("decide() generates a UUID when status or status.uuid is missing or empty", () => {
  for (const status of [undefined, {}, { uuid: null }, { uuid: "" }, { state: "Ok" }]) {
    assert.deepEqual(decide(status), { action: "generate" }, JSON.stringify(status));
  }
});

Deno.test("decide() leaves a valid UUID in state Ok alone", () => {
  assert.deepEqual(decide({ uuid: VALID, state: "Ok", message: "x" }), { action: "none" });
});

Deno.test("decide() marks a number or a non-UUID string as Error without replacing it", () => {
  const num = decide({ uuid: 42, state: "Ok" });
  assert.equal(num.action, "mark-error");
  assert.match((num as { message: string }).message, /number 42/);
  const str = decide({ uuid: "not-a-uuid" });
  assert.equal(str.action, "mark-error");
  assert.match((str as { message: string }).message, /"not-a-uuid"/);
});

Deno.test("decide() does nothing once a bad value is already marked Error with the same message", () => {
  const first = decide({ uuid: "nope" }) as { action: "mark-error"; message: string };
  assert.deepEqual(decide({ uuid: "nope", state: "Error", message: first.message }), { action: "none" });
});

Deno.test("decide() corrects an unknown or missing state to Ok but keeps the UUID", () => {
  assert.deepEqual(decide({ uuid: VALID, state: "Banana" }), { action: "mark-ok", uuid: VALID });
  assert.deepEqual(decide({ uuid: VALID }), { action: "mark-ok", uuid: VALID });
  assert.deepEqual(decide({ uuid: VALID, state: "Error" }), { action: "mark-ok", uuid: VALID });
});

Deno.test("decide() truncates huge garbage in its message", () => {
  const d = decide({ uuid: "x".repeat(10_000) }) as { message: string };
  assert.ok(d.message.length < 300, `message is ${d.message.length} chars`);
});

Deno.test("statusFor() writes a new UUID only for generate, and the message of an Error, with observedGeneration", () => {
  const ok = { state: "Ok", message: OK_MESSAGE, observedGeneration: 3 };
  assert.deepEqual(statusFor({ action: "generate" }, () => VALID, 3), { uuid: VALID, ...ok });
  assert.deepEqual(statusFor({ action: "mark-ok", uuid: VALID }, () => "unused", 3), ok);
  assert.deepEqual(statusFor({ action: "mark-error", message: "bad" }, () => "unused", 3), {
    state: "Error",
    message: "bad",
    observedGeneration: 3,
  });
});

Deno.test("decide() accepts exactly the UUIDs the uuid package's validate() accepts", async () => {
  const { validate, v1, v4, v7 } = await import("uuid");
  const corpus = [
    VALID,
    VALID.toUpperCase(),
    v1(),
    v4(),
    v7(),
    crypto.randomUUID(),
    "00000000-0000-0000-0000-000000000000",
    "ffffffff-ffff-ffff-ffff-ffffffffffff",
    "0f8fad5b-d9cb-069f-a165-70867728950e", // version 0
    "0f8fad5b-d9cb-969f-a165-70867728950e", // version 9
    "0f8fad5b-d9cb-469f-c165-70867728950e", // variant bits
    "0f8fad5bd9cb469fa16570867728950e", // no hyphens
    `${VALID}\n`,
    ` ${VALID}`,
    "{0f8fad5b-d9cb-469f-a165-70867728950e}",
    "not-a-uuid",
  ];
  for (const uuid of corpus) {
    const accepted = decide({ uuid, state: "Ok", message: OK_MESSAGE }).action !== "mark-error";
    assert.equal(accepted, validate(uuid), JSON.stringify(uuid));
  }
});
